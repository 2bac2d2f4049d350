package protocol

import (
	"strings"
	"unicode/utf8"
)

// Tag recognition looks at a line the way a person reading the reply would:
// indentation, invisible characters pasted from web pages and one Markdown
// list marker in front of the tag do not matter. Body lines are never
// changed by this; only the copy used for recognition is cleaned.

// isInvisible reports characters that chat pages put around text without
// meaning anything: zero-width spaces and joiners, word joiners, stray BOMs.
func isInvisible(r rune) bool {
	switch r {
	case '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF':
		return true
	}
	return false
}

// isWideSpace reports non-ASCII spaces that stand for an ordinary space.
func isWideSpace(r rune) bool {
	switch r {
	case '\u00A0', '\u202F', '\u2007', '\u3000':
		return true
	}
	return false
}

// cleanLine removes invisible characters, turns non-ASCII spaces into
// ordinary ones and bytes that are not UTF-8 into U+FFFD. It returns s
// itself when there is nothing to clean.
func cleanLine(s string) string {
	if isASCII(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case isInvisible(r):
			return -1
		case isWideSpace(r):
			return ' '
		}
		return r
	}, s)
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

func skipBlanks(s string, i int) int {
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return i
}

// trimLine trims ASCII blanks and, if there are any, invisible characters
// and non-ASCII spaces.
func trimLine(s string) string {
	return strings.TrimSpace(cleanLine(s))
}

// isBlankLine reports a line with nothing a reader would see.
func isBlankLine(s string) bool {
	if i := skipSpace(s); i < len(s) && s[i] < utf8.RuneSelf {
		return false // most lines: something printable
	}
	return trimLine(s) == ""
}

// skipSpace skips the ASCII spaces strings.TrimSpace removes.
func skipSpace(s string) int {
	i := 0
	for i < len(s) && (isBlank(s[i]) || s[i] == '\r' || s[i] == '\v' || s[i] == '\f') {
		i++
	}
	return i
}

// skipListMarker returns the index after a Markdown list marker ("- ",
// "* ", "+ ", "1. ", "1) ") that starts at i, or i when there is none.
func skipListMarker(s string, i int) int {
	j := i
	switch {
	case j < len(s) && (s[j] == '-' || s[j] == '*' || s[j] == '+'):
		j++
	default:
		for j < len(s) && j-i < 9 && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i || j >= len(s) || (s[j] != '.' && s[j] != ')') {
			return i
		}
		j++
	}
	if j >= len(s) || !isBlank(s[j]) {
		return i
	}
	return skipBlanks(s, j)
}

// skipJunk skips blanks, invisible characters and non-ASCII spaces.
func skipJunk(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != ' ' && r != '\t' && !isInvisible(r) && !isWideSpace(r) {
			return i
		}
		i += n
	}
	return i
}

// mayStartWith is a quick look at a line: false when, after ASCII space,
// it starts with an ASCII character not in chars, so that trimLine cannot
// make it start with one.
func mayStartWith(line, chars string) bool {
	i := skipSpace(line)
	return i == len(line) || line[i] >= utf8.RuneSelf || strings.IndexByte(chars, line[i]) >= 0
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// tagStartAt reads the tag of a line whose '[' (or "\\[") tagOpen found at
// k: it returns the cleaned text from the '[' on, Markdown escapes read
// (see unescapeTag), the column of the '[' and whether it was escaped.
// Most lines are rejected by their first characters without any copying.
func tagStartAt(line string, k int) (string, int, bool, bool) {
	n := k + 1
	if line[k] == '\\' {
		n++
	}
	// A tag's name starts with a letter, a closing tag's with '/': "[ ]"
	// and "[1]" are refused before any cleaning.
	if n == len(line) {
		return "", 0, false, false
	}
	if c := line[n]; c < utf8.RuneSelf && c != '/' && !isLetter(c) {
		return "", 0, false, false
	}
	// What comes before the tag counts only for its width.
	s := cleanLine(line[k:])
	for len(s) > 0 && isBlank(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	s, escaped := unescapeTag(s)
	return s, cleanColumns(line[:k]), true, escaped
}

// unescapeTag reads a tag copied as Markdown with its escapes ("\\[CREATE\\_FILE
// path="a\\_b.py"\\]"), as an editor or a page's converter writes rendered
// text: a backslash before ASCII punctuation, up to the tag's closing ']',
// is left out. What follows the tag is kept as it is.
func unescapeTag(s string) (string, bool) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	quoted, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			escaped = true
			i++
			c = s[i]
		case c == '"':
			quoted = !quoted
		}
		b.WriteByte(c)
		if c == ']' && !quoted {
			b.WriteString(s[i+1:])
			break
		}
	}
	return b.String(), escaped
}

// isASCIIPunct reports the characters Markdown lets a backslash escape.
func isASCIIPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !isLetter(c) && (c < '0' || c > '9')
}

// tagOpen finds the '[' of a tag at the start of a line, after
// indentation, invisible characters and one list marker, or the backslash
// of a Markdown escape before it.
func tagOpen(line string) (int, bool) {
	i := skipJunk(line, 0)
	if i == len(line) {
		return 0, false
	}
	if isTagStart(line, i) {
		return i, true
	}
	j := skipListMarker(line, i)
	if j == i {
		return 0, false
	}
	if j = skipJunk(line, j); !isTagStart(line, j) {
		return 0, false
	}
	return j, true
}

// isTagStart reports a '[', or an escaped one, at line[i:].
func isTagStart(line string, i int) bool {
	return i < len(line) && (line[i] == '[' || line[i] == '\\' && i+1 < len(line) && line[i+1] == '[')
}

// cleanColumns is columns(cleanLine(s)).
func cleanColumns(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case isInvisible(r):
		case r == '\t':
			n += 4 - n%4
		default:
			n++
		}
	}
	return n
}
