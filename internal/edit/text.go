package edit

import "strings"

// splitLines cuts s into lines without their terminators. A final line
// terminator ends the last line rather than starting an empty one, so "a\n"
// and "a" are both one line and "" is none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// bodyLines reads an LLM-written block (a replacement or a search text) as
// lines: CRLF becomes LF first, and one trailing newline only ends the last
// line. An empty body has no lines, so replacing with it deletes.
func bodyLines(s string) []string { return splitLines(toLF(s)) }

// toLF turns CRLF line ends into LF.
func toLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// lineEnding is the terminator most lines of s use: "\r\n" when CRLF lines
// outnumber bare LF lines, else "\n". Mixed files keep their odd lines as they
// are; only new lines take the dominant style.
func lineEnding(s string) string {
	crlf := strings.Count(s, "\r\n")
	if crlf > 0 && crlf >= strings.Count(s, "\n")-crlf {
		return "\r\n"
	}
	return "\n"
}

// withEnding rewrites an LF text to use eol.
func withEnding(s, eol string) string { return strings.ReplaceAll(s, "\n", eol) }

// isBlank reports whether a line holds only whitespace.
func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// trimEOLSpace drops trailing spaces, tabs and a stray CR.
func trimEOLSpace(s string) string { return strings.TrimRight(s, " \t\r") }

// indentOf returns the leading spaces and tabs of a line.
func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// indentWidth measures leading whitespace in columns, a tab counting tab
// columns; it is what makes "\t" and four spaces comparable.
func indentWidth(indent string, tab int) int {
	w := 0
	for _, c := range indent {
		if c == '\t' {
			w += tab
		} else {
			w++
		}
	}
	return w
}
