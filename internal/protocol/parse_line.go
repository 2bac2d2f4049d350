package protocol

import (
	"strings"
	"unicode/utf8"
)

// Tag recognition looks at a line the way a person reading the reply would:
// indentation, invisible characters pasted from web pages and one Markdown
// list marker in front of the tag do not matter. Body lines are never
// changed by this; only the copy used for recognition is cleaned.

// junk maps the characters chat pages put around text without meaning
// anything (zero-width spaces and joiners, stray BOMs) to -1 and non-ASCII
// spaces to ' '.
func junk(r rune) rune {
	switch r {
	case '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF':
		return -1
	case '\u00A0', '\u202F', '\u2007', '\u3000':
		return ' '
	}
	return r
}

// cleanLine removes invisible characters, turns non-ASCII spaces into
// ordinary ones and bytes that are not UTF-8 into U+FFFD. An ASCII line,
// as most are, is returned without a call per byte.
func cleanLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Map(junk, s)
		}
	}
	return s
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

func skipBlanks(s string, i int) int {
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return i
}

// trimLine trims blanks, invisible characters and non-ASCII spaces.
func trimLine(s string) string { return strings.TrimSpace(cleanLine(s)) }

// isBlankLine reports a line with nothing a reader would see. Most lines
// are refused by their first printable ASCII character.
func isBlankLine(s string) bool {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\r\v\f", s[i]) >= 0 {
		i++
	}
	return (i == len(s) || s[i] >= utf8.RuneSelf) && trimLine(s[i:]) == ""
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
		if c := junk(r); c >= 0 && c != ' ' && c != '\t' {
			return i
		}
		i += n
	}
	return i
}

// tagText finds the tag at the start of a line, after indentation,
// invisible characters and one list marker: it returns the cleaned text
// from its '[' on, Markdown escapes read (see unescapeTag), the column of
// the '[' and whether it was escaped. Most lines are refused by their first
// characters without any copying.
func tagText(line string) (s string, indent int, escaped, ok bool) {
	isStart := func(i int) bool {
		return i < len(line) && (line[i] == '[' || line[i] == '\\' && i+1 < len(line) && line[i+1] == '[')
	}
	k := skipJunk(line, 0)
	if !isStart(k) {
		if j := skipListMarker(line, k); j > k {
			k = skipJunk(line, j)
		}
		if !isStart(k) {
			return "", 0, false, false
		}
	}
	n := k + 1
	if line[k] == '\\' {
		n++
	}
	// A tag's name starts with a letter, a closing tag's with '/': "[ ]"
	// and "[1]" are refused before any cleaning.
	if n == len(line) || line[n] < utf8.RuneSelf && line[n] != '/' && !isLetter(line[n]) {
		return "", 0, false, false
	}
	// What comes before the tag counts only for its width.
	for _, r := range line[:k] {
		switch {
		case junk(r) < 0:
		case r == '\t':
			indent += 4 - indent%4
		default:
			indent++
		}
	}
	s, escaped = unescapeTag(strings.TrimRight(cleanLine(line[k:]), " \t"))
	return s, indent, escaped, true
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
