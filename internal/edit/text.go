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

// makeIndent renders a width in the file's style: tabs first, then the spaces
// that do not fill a whole tab.
func makeIndent(width, tab int, useTabs bool) string {
	if width <= 0 {
		return ""
	}
	if !useTabs {
		return strings.Repeat(" ", width)
	}
	return strings.Repeat("\t", width/tab) + strings.Repeat(" ", width%tab)
}

// usesTabs reports whether more indented lines of a file start with a tab
// than with a space.
func usesTabs(lines []string) bool {
	tabs, spaces := 0, 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "\t"):
			tabs++
		case strings.HasPrefix(l, " "):
			spaces++
		}
	}
	return tabs > spaces
}

// lineOffsets returns the byte offset where each line of s starts, plus a
// final entry len(s) so that line i spans offsets[i]..offsets[i+1].
func lineOffsets(s string) []int {
	offs := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && i+1 < len(s) {
			offs = append(offs, i+1)
		}
	}
	if s == "" {
		return offs
	}
	return append(offs, len(s))
}
