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

// cleanLine removes invisible characters and turns non-ASCII spaces into
// ordinary ones. It returns s itself when there is nothing to clean.
func cleanLine(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case isInvisible(r):
		case isWideSpace(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
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
	for i := 0; i < len(s); i++ {
		if !isBlank(s[i]) {
			if s[i] < utf8.RuneSelf && s[i] != '\r' && s[i] != '\v' && s[i] != '\f' {
				return false // printable ASCII: the line shows something
			}
			return trimLine(s) == ""
		}
	}
	return true
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

// columns measures indentation, counting a tab as reaching the next multiple
// of four.
func columns(s string) int {
	n := 0
	for _, r := range s {
		if r == '\t' {
			n += 4 - n%4
		} else {
			n++
		}
	}
	return n
}

// skipJunk skips blanks, invisible characters and non-ASCII spaces.
func skipJunk(s string, i int) int {
	for i < len(s) {
		if isBlank(s[i]) {
			i++
			continue
		}
		if s[i] < utf8.RuneSelf {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isInvisible(r) && !isWideSpace(r) {
			return i
		}
		i += size
	}
	return i
}

// maybeTag is a quick look at a line: false when its first character that
// is not a blank rules out a tag, which is so for most lines.
func maybeTag(line string) bool {
	i := 0
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	if i == len(line) {
		return false
	}
	switch c := line[i]; {
	case c == '[', c == '-', c == '*', c == '+', c >= '0' && c <= '9', c >= utf8.RuneSelf:
		return true
	}
	return false
}

// tagStart finds a tag at the start of a line: it returns the cleaned text
// from the '[' on and the column of that '['. Most lines are rejected by
// their first characters without any copying.
func tagStart(line string) (string, int, bool) {
	i := skipJunk(line, 0)
	if i == len(line) {
		return "", 0, false
	}
	if line[i] != '[' {
		j := skipListMarker(line, i)
		if j == i {
			return "", 0, false
		}
		if j = skipJunk(line, j); j >= len(line) || line[j] != '[' {
			return "", 0, false
		}
	}
	line = cleanLine(line)
	i = skipBlanks(line, 0)
	j := skipListMarker(line, i)
	if j >= len(line) || line[j] != '[' {
		return "", 0, false
	}
	end := len(line)
	for end > j && isBlank(line[end-1]) {
		end--
	}
	return line[j:end], columns(line[:j]), true
}
