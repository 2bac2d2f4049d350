// Package hint attaches a next step for the person to an error, so the
// command line can print it as a "courier: hint: ..." line under the error.
package hint

import "errors"

type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

// Wrap returns err carrying a hint; a nil err stays nil.
func Wrap(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hinted{err: err, hint: hint}
}

// Of returns the outermost hint carried by err, or "".
func Of(err error) string {
	var h *hinted
	if errors.As(err, &h) {
		return h.hint
	}
	return ""
}
