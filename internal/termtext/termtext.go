// Package termtext makes text from a reply or a command's output safe to
// print on a terminal: every character that a terminal would act on rather
// than show, or that would make the text read differently from what it
// is, is written visibly as an escape like \x1b, \r or \u202e.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Safe returns s with every unsafe character shown as an escape, and s
// itself when it holds none. Unsafe are: the C0 controls but tab and
// newline (ESC starts cursor moves, line clearing, OSC 52 clipboard
// writes and window titles; CR returns over what was printed), DEL, the
// C1 controls U+0080-U+009F (U+009B is CSI on some terminals), bytes that
// are not UTF-8 (a lone 0x9b is CSI to a terminal reading 8-bit
// controls), the line and paragraph separators, and the invisible format
// characters (bidi overrides and isolates like U+202E and U+2066-U+2069,
// zero-width spaces and joiners, the BOM, tag characters), which reorder
// or hide text. Courier's own colour codes are added after this.
func Safe(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || unsafe(r) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1 || r < 0x80 && r != '\r' && unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r):
			q := strconv.QuoteRuneToASCII(r) // '\r', '\u202e', '\U000e0001'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Command shows a command whole on one line, in single quotes, made safe,
// with each line break written as \n; and after it env, the variables it
// is given besides its text, as shell assignments: 'git add -A' with
// GIT_DIR=x.
func Command(command, env string) string {
	s := "'" + Safe(strings.ReplaceAll(strings.TrimRight(command, "\n"), "\n", `\n`)) + "'"
	if env != "" {
		s += " with " + Safe(env)
	}
	return s
}

// unsafe reports whether a terminal would act on r, or it would change how
// the text around it reads, rather than show as itself.
func unsafe(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || hiddenFiller(r)
}

// hiddenFiller lists letters that show as nothing, which can hide text
// between visible words (the Hangul fillers).
func hiddenFiller(r rune) bool {
	switch r {
	case 0x115f, 0x1160, 0x3164, 0xffa0:
		return true
	}
	return false
}
