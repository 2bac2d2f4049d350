package edit

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/courier-agent/courier/internal/command"
)

// Applied is the outcome of ApplyEdits.
type Applied struct {
	Text string // the new file content
	// Notes say, one line per pair, how a pair that did not match exactly
	// was matched, or that it was skipped as already applied: they tell the
	// LLM what to copy more carefully next time.
	Notes   []string
	Skipped []int // 1-based numbers of the pairs skipped as already applied
}

// ApplyEdits applies search/replace pairs in order, each to the text the
// ones before it left, all or nothing: an error (*editError) keeps content.
// A pair that seems already applied is skipped (Skipped, Notes), so that a
// resent reply does not fail. Each pair is read as written, then without
// blank lines at the edges of its search text, then without line numbers
// copied from a listing ("  12 | "); each reading is looked for exactly
// (CRLF files matching LF text), then as whole lines ignoring trailing
// whitespace, then as whole lines indented evenly more or less (the
// replacement shifted alike, in the file's style). The first that finds
// anything decides: several places are an error naming their lines; none
// shows the most similar part of the file. An empty search text fills an
// empty file only.
func ApplyEdits(content string, edits []command.Edit) (Applied, error) {
	if len(edits) == 0 {
		return Applied{Text: content}, errors.New("the edit has no search/replace pairs; send at least one search text and its replacement")
	}
	a := Applied{Text: content}
	origLines := len(splitLines(content))
	for i, e := range edits {
		text, note, err := applyPair(a.Text, e, i+1)
		if err != nil {
			var ee *editError
			if errors.As(err, &ee) && ee.applied {
				a.Skipped = append(a.Skipped, i+1)
				a.Notes = append(a.Notes, ee.Reason+"; skipped it")
				continue
			}
			if i > 0 && len(splitLines(a.Text)) != origLines && errors.As(err, &ee) && len(ee.Lines) > 0 {
				ee.Detail = strings.TrimLeft(ee.Detail+"\n(line numbers count the file after the earlier pairs of this edit were applied)", "\n")
			}
			return Applied{Text: content}, err
		}
		a.Text = text
		if note != "" {
			a.Notes = append(a.Notes, note)
		}
	}
	return a, nil
}

// variant is a reading of a search/replace pair; the later ones undo
// mistakes LLMs make when copying the search text. Rewritten texts keep the
// final newline their original had, so a pair of whole lines stays one and
// an empty replacement still deletes whole lines.
type variant struct {
	search, replace string
	how             string // how the pair was read, for notes; "" as written
}

// applyPair applies pair n (1-based) to content.
func applyPair(content string, e command.Edit, n int) (string, string, error) {
	search, replace := toLF(e.Search), toLF(e.Replace)
	if isBlank(search) {
		if isBlank(content) {
			return replace, "", nil
		}
		return "", "", fmt.Errorf("search text of edit %d is empty, but the file is not; put the lines to change in the search text, or write the whole file anew", n)
	}
	m := newMatcher(content)
	v, lv, hits := m.first(variants(search, replace))
	switch {
	case len(hits) > 1:
		return "", "", ambiguous(hits, n)
	case len(hits) == 1:
		// An insertion made twice: the replacement keeps the search text
		// as its anchor, and the whole replacement is in the file already.
		if lv == levelExact && v.how == "" && strings.Contains(v.replace, v.search) {
			if done := m.findExact(v.replace); len(done) > 0 {
				return "", "", alreadyApplied(n, done[0].line+1)
			}
		}
		return m.replace(hits[0], lv, v.replace), matchNote(n, v, lv, hits[0]), nil
	}
	// The search text is gone: the replacement found once means the pair
	// was most likely applied already.
	if !isBlank(replace) {
		if _, _, done := m.first(variants(replace, "")); len(done) == 1 {
			return "", "", alreadyApplied(n, done[0].line+1)
		}
	}
	return "", "", notFound(m, search, replace, n)
}

// first returns the first reading and level at which one of vs matches.
func (m *matcher) first(vs []variant) (variant, level, []hit) {
	for _, v := range vs {
		for lv := levelExact; lv <= levelIndent; lv++ {
			if hits := m.find(v.search, lv); len(hits) > 0 {
				return v, lv, hits
			}
		}
	}
	return variant{}, levelExact, nil
}

// variants lists the readings of a pair to try, as written first.
func variants(search, replace string) []variant {
	out := []variant{{search: search, replace: replace}}
	if s, r, ok := dropBlankEdges(search, replace); ok {
		out = append(out, variant{s, r, "after dropping blank lines at the start or end of the search text"})
	}
	if s, r, ok := dropNumbers(search, replace); ok {
		out = append(out, variant{s, r, "after removing line numbers copied from a numbered listing"})
		if s2, r2, ok := dropBlankEdges(s, r); ok {
			out = append(out, variant{s2, r2, "after removing copied line numbers and blank lines at the edges of the search text"})
		}
	}
	return out
}

// dropBlankEdges removes blank lines at the start and end of the search
// text. The replacement loses as many blank lines at the same edge, when it
// has them: the LLM copied the stray line into both.
func dropBlankEdges(search, replace string) (string, string, bool) {
	sl, rl := bodyLines(search), bodyLines(replace)
	lead, trail := blankEdges(sl)
	if lead == 0 && trail == 0 || lead == len(sl) {
		return "", "", false
	}
	rlead, rtrail := blankEdges(rl)
	if rlead == len(rl) {
		rlead, rtrail = 0, 0
	}
	rl = rl[min(lead, rlead) : len(rl)-min(trail, rtrail)]
	return joinLike(sl[lead:len(sl)-trail], search), joinLike(rl, replace), true
}

// joinLike joins lines, ending them with a newline when orig ended so.
func joinLike(lines []string, orig string) string {
	if len(lines) == 0 {
		return ""
	}
	s := strings.Join(lines, "\n")
	if strings.HasSuffix(orig, "\n") {
		s += "\n"
	}
	return s
}

// blankEdges counts blank lines at the start and at the end of lines.
func blankEdges(lines []string) (lead, trail int) {
	for lead < len(lines) && isBlank(lines[lead]) {
		lead++
	}
	for trail < len(lines)-lead && isBlank(lines[len(lines)-1-trail]) {
		trail++
	}
	return lead, trail
}

// numberPrefix is the "  12 | " that Numbered puts before each line; an LLM
// aiming at a numbered listing sometimes copies it into SEARCH and REPLACE.
var numberPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(\d+) \|(?: |$)`) })

// dropNumbers strips listing numbers when every search line carries one and
// they count up by one, which real code does not do by accident. The
// replacement loses them too when all its non-blank lines have them.
func dropNumbers(search, replace string) (string, string, bool) {
	sl := bodyLines(search)
	prev := -1
	for i, l := range sl {
		sm := numberPrefix().FindStringSubmatch(l)
		if sm == nil {
			return "", "", false
		}
		num, _ := strconv.Atoi(sm[1])
		if i > 0 && num != prev+1 {
			return "", "", false
		}
		prev = num
		sl[i] = l[len(sm[0]):]
	}
	rl := bodyLines(replace)
	stripped := make([]string, len(rl))
	for i, l := range rl {
		sm := numberPrefix().FindString(l)
		if sm == "" && !isBlank(l) {
			return joinLike(sl, search), replace, true
		}
		stripped[i] = l[len(sm):]
	}
	return joinLike(sl, search), joinLike(stripped, replace), true
}

func alreadyApplied(n, line int) error {
	return &editError{Reason: fmt.Sprintf("edit %d seems already applied: the replacement text is already at line %d", n, line),
		Lines: []int{line}, applied: true}
}

// ambiguous names the lines where the search text matched.
func ambiguous(hits []hit, n int) error {
	var lines []int
	for _, h := range hits {
		if len(lines) == 0 || lines[len(lines)-1] != h.line+1 {
			lines = append(lines, h.line+1)
		}
	}
	const show = 10
	list := make([]string, 0, show)
	for _, l := range lines[:min(len(lines), show)] {
		list = append(list, fmt.Sprint(l))
	}
	where := "lines " + strings.Join(list, ", ")
	if len(lines) == 1 {
		where = "all on line " + list[0]
	}
	if len(lines) > show {
		where += fmt.Sprintf(" and %d more", len(lines)-show)
	}
	return &editError{Reason: fmt.Sprintf("search text of edit %d matches %d places (%s); add surrounding lines to make it unique", n, len(hits), where),
		Lines: lines}
}

// matchNote says what was forgiven to match pair n; "" when it matched as
// written.
func matchNote(n int, v variant, lv level, h hit) string {
	var how []string
	if v.how != "" {
		how = append(how, v.how)
	}
	switch lv {
	case levelTrailing:
		how = append(how, "after ignoring trailing whitespace")
	case levelIndent:
		how = append(how, indentNote(h.shift))
	}
	if len(how) == 0 {
		return ""
	}
	return fmt.Sprintf("edit %d matched line %d only %s", n, h.line+1, strings.Join(how, " and "))
}

func indentNote(shift int) string {
	switch {
	case shift > 0:
		return fmt.Sprintf("after allowing for the file being indented %d columns deeper (the replacement was indented the same way)", shift)
	case shift < 0:
		return fmt.Sprintf("after allowing for the file being indented %d columns less (the replacement was indented the same way)", -shift)
	}
	return "after allowing for tabs and spaces being swapped (the replacement was indented like the file)"
}
