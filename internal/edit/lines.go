package edit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// LineRange replaces lines Start..End (1-based, inclusive, numbered as in
// the text before the reply) with Text: any number of lines, empty to
// delete. End = Start-1 inserts before line Start (lines+1, lines appends;
// 1, 0 fills an empty file).
type LineRange struct {
	Start, End int
	Text       string
}

// String writes the range the way errors name it.
func (r LineRange) String() string {
	if r.End < r.Start {
		return fmt.Sprintf("insertion before line %d", r.Start)
	}
	return span(r.Start, r.End)
}

// overlaps reports whether two ranges change a common line. An insertion
// conflicts with a range that removes the lines on both sides of it; two
// insertions at one place do not conflict and land in the order applied.
func overlaps(a, b LineRange) bool {
	if a.End < a.Start && b.End < b.Start {
		return false
	}
	if a.End < a.Start {
		return b.Start < a.Start && b.End >= a.Start
	}
	if b.End < b.Start {
		return a.Start < b.Start && a.End >= b.Start
	}
	return max(a.Start, b.Start) <= min(a.End, b.End)
}

// before orders ranges in the file: by start line, and an insertion before
// line s ahead of the range that replaces line s.
func before(a, b LineRange) bool {
	if a.Start != b.Start {
		return a.Start < b.Start
	}
	return a.End < a.Start && b.End >= b.Start
}

// Tracker applies the line-range edits of one reply to one file one at a
// time, each addressed in the file's original line numbers however much the
// earlier ones moved the lines. It assumes nothing else changes the file in
// between; after any other change, start a new Tracker from the new text.
type Tracker struct {
	orig    []string // original lines without terminators
	terms   []string // their terminators, eol for an unterminated last line
	eol     string   // terminator for new lines
	noFinal bool     // the original is not empty and lacks a final newline
	applied []LineRange
	text    string
}

// NewTracker starts tracking edits to original.
func NewTracker(original string) *Tracker {
	t := &Tracker{eol: lineEnding(original), text: original, noFinal: original != "" && !strings.HasSuffix(original, "\n")}
	for _, l := range splitLines(original) {
		body := strings.TrimSuffix(l, "\r")
		t.orig = append(t.orig, body)
		t.terms = append(t.terms, l[len(body):]+"\n")
	}
	if t.noFinal {
		t.terms[len(t.terms)-1] = t.eol // render trims the very end
	}
	return t
}

// ResumeTracker rebuilds a Tracker after a crash from the original text and
// the ranges already applied to it, in the order they were applied.
func ResumeTracker(original string, applied []LineRange) (*Tracker, error) {
	t := NewTracker(original)
	for _, r := range applied {
		if _, err := t.Apply(r); err != nil {
			return nil, fmt.Errorf("replay applied line ranges: %w", err)
		}
	}
	return t, nil
}

// Apply applies r and returns the whole new text. It fails, changing
// nothing, when r is reversed, reaches outside the original text, or
// overlaps a range applied earlier. Its errors speak of "this edit", since
// the caller knows which command it is.
func (t *Tracker) Apply(r LineRange) (string, error) {
	if err := t.check(r); err != nil {
		return t.text, err
	}
	at := len(t.applied)
	for i, a := range t.applied {
		if before(r, a) {
			at = i
			break
		}
	}
	t.applied = slices.Insert(t.applied, at, r)
	t.text = t.render()
	return t.text, nil
}

// Text returns the current text.
func (t *Tracker) Text() string { return t.text }

// check validates r against the original text and the earlier ranges.
func (t *Tracker) check(r LineRange) error {
	n := len(t.orig)
	switch {
	case r.Start < 1:
		return fmt.Errorf("start_line %d is invalid; lines count from 1", r.Start)
	case r.End < r.Start-1:
		return fmt.Errorf("end_line %d is before start_line %d", r.End, r.Start)
	case r.End > n || r.Start > n+1:
		return fmt.Errorf("%s is past the end of the file, which has %s (before this reply's edits); %s", lineRef(r), human.Count(n, "line", ""), appendAdvice(n))
	}
	for _, a := range t.applied {
		if overlaps(a, r) {
			return fmt.Errorf("this edit (%s) overlaps an earlier edit of this reply (%s); %s", r, a, overlapAdvice)
		}
	}
	return nil
}

// overlapAdvice ends every overlap error.
const overlapAdvice = "line numbers refer to the file before this reply, so each line can be changed once: merge the two edits"

// appendAdvice tells how to add lines at the end in a form every front end
// accepts: replacing the last line with itself and the new lines.
func appendAdvice(n int) string {
	if n == 0 {
		return "the file is empty, so write it anew with its whole content"
	}
	return fmt.Sprintf("to add lines at the end, replace line %d with itself followed by the new lines (start_line=\"%d\" end_line=\"%d\")", n, n, n)
}

// lineRef names the line of r that is out of range.
func lineRef(r LineRange) string {
	if r.Start > r.End {
		return fmt.Sprintf("start_line %d", r.Start)
	}
	return fmt.Sprintf("end_line %d", r.End)
}

// render builds the text from the original lines and the applied ranges.
func (t *Tracker) render() string {
	var b strings.Builder
	next := 0 // 0-based next original line to copy
	for _, r := range t.applied {
		for ; next < r.Start-1; next++ {
			b.WriteString(t.orig[next] + t.terms[next])
		}
		for _, l := range bodyLines(r.Text) {
			b.WriteString(l + t.eol)
		}
		next = max(next, r.End)
	}
	for ; next < len(t.orig); next++ {
		b.WriteString(t.orig[next] + t.terms[next])
	}
	out := b.String()
	if t.noFinal {
		out = strings.TrimSuffix(strings.TrimSuffix(out, "\n"), "\r")
	}
	return out
}
