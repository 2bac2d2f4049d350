package protocol

import (
	"fmt"
	"strings"

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
	switch line { // the markers as the protocol writes them
	case "<<<<<<< SEARCH":
		return searchMarker
	case "=======":
		return dividerMarker
	case ">>>>>>> REPLACE":
		return replaceMarker
	}
	s := trimLine(line)
	if len(s) < 5 {
		return notMarker
	}
	ch := s[0]
	n := 0
	for n < len(s) && s[n] == ch {
		n++
	}
	if n < 5 || n > 9 {
		return notMarker
	}
	word := strings.ToUpper(strings.TrimSpace(s[n:]))
	switch {
	case ch == '<' && word == "SEARCH":
		return searchMarker
	case ch == '=' && word == "":
		return dividerMarker
	case ch == '>' && word == "REPLACE":
		return replaceMarker
	}
	return notMarker
}

// pairState is where parseEdits is within a body.
type pairState uint8

const (
	outside pairState = iota
	inSearch
	inReplace
)

// editScan collects search/replace pairs line by line.
type editScan struct {
	body     string
	markup   bool
	base     int // reply line number of the body's first line
	state    pairState
	open     int // reply line of the current pair's SEARCH marker
	from     int // offset where the current section's text starts
	search   string
	edits    []command.Edit
	problem  string
	hasPairs bool
}

// parseEdits reads search/replace pairs from an EDIT_FILE body. Blank lines
// and fence lines between pairs are ignored; any other text outside a pair,
// or a pair with missing or doubled markers, is a problem. hasPairs reports
// whether the body has any SEARCH marker at all.
func parseEdits(body string, markup bool, base int) ([]command.Edit, string, bool) {
	e := &editScan{body: body, markup: markup, base: base}
	n := 0
	eachLine(body, func(line string, start int) bool {
		e.line(line, start, base+n)
		n++
		return true // go on after a problem, to learn whether there are pairs
	})
	if e.problem == "" && e.state != outside {
		e.problem = fmt.Sprintf("has a SEARCH/REPLACE pair at line %d without its closing >>>>>>> REPLACE line", e.open)
	}
	if !e.hasPairs {
		return nil, "", false
	}
	if e.problem != "" {
		return nil, e.problem, true
	}
	return e.edits, "", true
}

func (e *editScan) line(line string, start, lineNo int) {
	m := markerOf(line)
	if m == searchMarker {
		e.hasPairs = true
	}
	next := start + len(line) + 1
	switch {
	case e.state == outside && m == searchMarker:
		e.state, e.open, e.from = inSearch, lineNo, next
	case e.state == outside && m == notMarker:
		if _, isFence := openFence(line); !isFence && !isBlankLine(line) {
			e.fail(lineNo, "has text outside any SEARCH/REPLACE pair at line %d")
		}
	case e.state == outside:
		e.fail(lineNo, "has a marker at line %d outside any pair; each pair starts with <<<<<<< SEARCH")
	case e.state == inSearch && m == dividerMarker:
		e.search = e.section(start)
		e.state, e.from = inReplace, next
	case e.state == inSearch && m != notMarker:
		e.fail(e.open, "has a SEARCH/REPLACE pair at line %d without its ======= line")
	case e.state == inReplace && m == replaceMarker:
		e.finish(start)
	case e.state == inReplace && m == dividerMarker:
		e.fail(e.open, "has a SEARCH/REPLACE pair at line %d with more than one ======= line; if the file itself has such a line, use start_line/end_line instead")
	case e.state == inReplace && m == searchMarker:
		e.fail(e.open, "has a SEARCH/REPLACE pair at line %d without its closing >>>>>>> REPLACE line")
	}
}

// fail keeps the first problem; after it the scan only looks for markers.
func (e *editScan) fail(line int, format string) {
	if e.problem == "" {
		e.problem = fmt.Sprintf(format, line)
	}
}

// section is the text from the current section's start to end, with the
// file content rules (a fence around it removed, each line ending in "\n").
func (e *editScan) section(end int) string {
	if end < e.from {
		return ""
	}
	return unfence(e.body[e.from:end], e.markup)
}

func (e *editScan) finish(end int) {
	replace := e.section(end)
	if strings.TrimSpace(e.search) == "" {
		e.fail(e.open, "has a SEARCH/REPLACE pair at line %d whose SEARCH part is empty; copy the exact lines to replace into it")
		return
	}
	e.edits = append(e.edits, command.Edit{Search: e.search, Replace: replace})
	e.state = outside
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
