package edit

import (
	"errors"
	"strings"
)

// Sentinel causes an *EditError wraps, for errors.Is.
var (
	ErrNotFound  = errors.New("search text not found")
	ErrAmbiguous = errors.New("search text matches several places")
	// ErrAlreadyApplied: the search text is gone but the replacement is there,
	// so the edit was most likely made already (a resent reply, or a repeat).
	// Callers may treat it as success with a note.
	ErrAlreadyApplied = errors.New("edit already applied")
	ErrEmptySearch    = errors.New("empty search text")
	ErrNoEdits        = errors.New("no search/replace pairs")
	ErrBadRange       = errors.New("invalid line range")
	ErrOverlap        = errors.New("overlapping line ranges")
)

// EditError explains why one edit could not be made, in words meant for the
// LLM that wrote it: Reason is one sentence, Detail (maybe empty) adds lines
// such as the most similar part of the file.
type EditError struct {
	Reason string
	Detail string
	// Lines are the 1-based file lines the error is about: the places an
	// ambiguous search matched, or where an applied replacement sits.
	Lines []int
	// Err is the sentinel cause (ErrNotFound, ErrAmbiguous, ...).
	Err error
}

// Error returns the reason, then the detail lines.
func (e *EditError) Error() string {
	if e.Detail == "" {
		return e.Reason
	}
	return e.Reason + "\n" + strings.TrimRight(e.Detail, "\n")
}

// Unwrap returns the sentinel cause.
func (e *EditError) Unwrap() error { return e.Err }
