package console

import (
	"fmt"
	"strings"
	"unicode"
)

// Safe makes text from a reply or a command's output harmless on a
// terminal: control characters (C0 but tab and newline, DEL, C1) and the
// invisible formatting characters that can make text read differently
// (bidirectional overrides and isolates, zero-width characters) are shown
// as visible escapes, so nothing can move the cursor, clear a line, set the
// window title, write the clipboard (OSC 52) or disguise a command.
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unsafeRune(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r == 0xfffd:
		return false
	}
	// Cf is the Unicode category of format characters: bidi controls,
	// zero-width joiners and spaces, the BOM, soft hyphen...
	return unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029
}
