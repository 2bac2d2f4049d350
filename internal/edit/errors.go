package edit

import "strings"

// editError explains why one edit could not be made, in words meant for the
// LLM that wrote it: Reason is one sentence, Detail (maybe empty) adds lines
// such as the most similar part of the file.
type editError struct {
	Reason, Detail string
	// Lines are the 1-based file lines the error is about: the places an
	// ambiguous search matched, or where an applied replacement sits.
	Lines []int
	// applied: the search text is gone but the replacement is there, so the
	// edit was most likely made already (a resent reply, or a repeat).
	applied bool
}

func (e *editError) Error() string {
	if e.Detail == "" {
		return e.Reason
	}
	return e.Reason + "\n" + strings.TrimRight(e.Detail, "\n")
}
