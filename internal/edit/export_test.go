package edit

import (
	"errors"
	"fmt"

	"github.com/courier-agent/courier/internal/command"
)

// SearchReplace is ApplyEdits without skipping pairs that seem already
// applied: those are an error too.
func SearchReplace(content string, edits []command.Edit) (string, error) {
	a, err := applyAll(content, edits, false)
	if err != nil {
		return content, err
	}
	return a.Text, nil
}

// Lines returns the original line count, the one every range refers to.
func (t *Tracker) Lines() int { return len(t.orig) }

// ApplyLineRanges applies several line-range edits that all refer to
// original, in whatever order they come. Overlapping ranges are an error
// naming both; ranges outside the file name its actual line count. Errors
// are numbered by the edits' 1-based position in the list. Nothing is
// applied when any range is bad.
func ApplyLineRanges(original string, edits []LineRange) (string, error) {
	for i, r := range edits {
		for j, a := range edits[:i] {
			if overlaps(a, r) {
				return original, &EditError{Index: i + 1,
					Reason: fmt.Sprintf("edit %d (%s) overlaps edit %d (%s); %s", i+1, r, j+1, a, overlapAdvice),
					Lines:  []int{r.Start, a.Start},
					Err:    ErrOverlap}
			}
		}
	}
	t := NewTracker(original)
	for i, r := range edits {
		if _, err := t.Apply(r); err != nil {
			var ee *EditError
			if errors.As(err, &ee) {
				ee.Index = i + 1
				ee.Reason = fmt.Sprintf("edit %d: %s", i+1, ee.Reason)
			}
			return original, err
		}
	}
	return t.Text(), nil
}
