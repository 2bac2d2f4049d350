package protocol

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
)

// marker is a line of a search/replace pair.
type marker uint8

const (
	notMarker marker = iota
	searchMarker
	dividerMarker
	replaceMarker
)

// markerOf recognises "<<<<<<< SEARCH", "=======" and ">>>>>>> REPLACE":
// five to nine marker characters, the word in any case, blanks around.
func markerOf(line string) marker {
	// Most lines are refused by their first byte, before any trimming.
	if line == "" || line[0] < utf8.RuneSelf && strings.IndexByte("<=> \t\r\v\f", line[0]) < 0 {
		return notMarker
	}
	s := trimLine(line)
	if s == "" {
		return notMarker
	}
	rest := strings.TrimLeft(s, s[:1])
	if n := len(s) - len(rest); n < 5 || n > 9 {
		return notMarker
	}
	switch word := strings.ToUpper(strings.TrimSpace(rest)); {
	case s[0] == '<' && word == "SEARCH":
		return searchMarker
	case s[0] == '=' && word == "":
		return dividerMarker
	case s[0] == '>' && word == "REPLACE":
		return replaceMarker
	}
	return notMarker
}

// parseEdits reads search/replace pairs from an EDIT_FILE body whose first
// line is reply line base. Blank lines and fence lines between pairs are
// ignored; any other text outside a pair, or a pair with missing or doubled
// markers, is a problem. hasPairs reports whether the body has any SEARCH
// marker at all.
func parseEdits(body string, markup bool, base int) (edits []command.Edit, problem string, hasPairs bool) {
	const (
		outside = iota
		inSearch
		inReplace
	)
	state := outside
	open, from, lineNo := 0, 0, base // the current pair's SEARCH line, where its section starts
	var search string
	// fail keeps the first problem; after it the scan only looks for markers.
	fail := func(line int, format string) {
		if problem == "" {
			problem = fmt.Sprintf(format, line)
		}
	}
	// section is the text of the current section up to end, with the file
	// content rules (a fence around it removed, each line ending in "\n").
	section := func(end int) string {
		if end < from {
			return ""
		}
		return unfence(body[from:end], markup)
	}
	for start, line := range lines(body) {
		m := markerOf(line)
		hasPairs = hasPairs || m == searchMarker
		next := start + len(line) + 1
		switch {
		case state == outside && m == searchMarker:
			state, open, from = inSearch, lineNo, next
		case state == outside && m == notMarker:
			if _, isFence := openFence(line); !isFence && !isBlankLine(line) {
				fail(lineNo, "has text outside any SEARCH/REPLACE pair at line %d")
			}
		case state == outside:
			fail(lineNo, "has a marker at line %d outside any pair; each pair starts with <<<<<<< SEARCH")
		case state == inSearch && m == dividerMarker:
			search = section(start)
			state, from = inReplace, next
		case state == inSearch && m != notMarker:
			fail(open, "has a SEARCH/REPLACE pair at line %d without its ======= line")
		case state == inReplace && m == replaceMarker && strings.TrimSpace(search) == "":
			fail(open, "has a SEARCH/REPLACE pair at line %d whose SEARCH part is empty; copy the exact lines to replace into it")
		case state == inReplace && m == replaceMarker:
			edits = append(edits, command.Edit{Search: search, Replace: section(start)})
			state = outside
		case state == inReplace && m == dividerMarker:
			fail(open, "has a SEARCH/REPLACE pair at line %d with more than one ======= line; if the file itself has such a line, use start_line/end_line instead")
		case state == inReplace && m == searchMarker:
			fail(open, "has a SEARCH/REPLACE pair at line %d without its closing >>>>>>> REPLACE line")
		}
		lineNo++ // go on after a problem, to learn whether there are pairs
	}
	if state != outside {
		fail(open, "has a SEARCH/REPLACE pair at line %d without its closing >>>>>>> REPLACE line")
	}
	if !hasPairs || problem != "" {
		return nil, problem, hasPairs
	}
	return edits, "", true
}

// editFormsProblem explains the two forms of EDIT_FILE.
func editFormsProblem(p string) string {
	return fmt.Sprintf(`has neither start_line/end_line attributes nor SEARCH/REPLACE pairs. Use either
[EDIT_FILE path=%q start_line="N" end_line="M"]
the new lines for N..M
[/EDIT_FILE]
or a body of one or more pairs:
[EDIT_FILE path=%q]
<<<<<<< SEARCH
the exact current lines
=======
the new lines
>>>>>>> REPLACE
[/EDIT_FILE]`, p, p)
}
