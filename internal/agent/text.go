package agent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// detailMax caps the text an error quotes from an agent or a server.
const detailMax = 300

// cleanLine makes text from an agent or a server safe to show in one line
// of an error on a terminal: colour codes dropped, other control
// characters and invalid UTF-8 replaced, whitespace runs folded, and cut
// to detailMax characters. The text is hostile: it must not move the
// cursor, clear the screen or forge a line of courier's own.
func cleanLine(s string) string {
	var b strings.Builder
	space := false
	n := 0
	for i := 0; i < len(s) && n < detailMax; {
		if s[i] == 0x1b { // ESC: skip a CSI sequence, or the lone escape
			i = skipEscape(s, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r == utf8.RuneError && size == 1, unicode.IsControl(r):
			r = '\uFFFD'
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// skipEscape returns the index after the escape sequence at s[i].
func skipEscape(s string, i int) int {
	i++
	if i < len(s) && s[i] == '[' {
		for i++; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
	}
	return i
}

// lastLine is the last non-blank line of text, cleaned for an error.
func lastLine(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	return cleanLine(text)
}
