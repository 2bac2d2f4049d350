package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

const redacted = "[redacted]"

func redactString(s string, secrets []string) string {
	for _, k := range secrets {
		s = strings.ReplaceAll(s, k, redacted)
	}
	return s
}

// redactError returns err with the secrets removed from its text, its
// chain kept.
func redactError(err error, secrets []string) error {
	if err == nil || redactString(err.Error(), secrets) == err.Error() {
		return err
	}
	return &redactedError{msg: redactString(err.Error(), secrets), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactor writes to w with the secrets replaced, holding back a tail that
// could begin a secret split across writes; Close writes it.
type redactor struct {
	w       io.Writer
	secrets [][]byte
	hold    []byte
}

func newRedactor(w io.Writer, secrets []string) *redactor {
	r := &redactor{w: w}
	for _, s := range secrets {
		r.secrets = append(r.secrets, []byte(s))
	}
	return r
}

func (r *redactor) Write(p []byte) (int, error) {
	if len(r.secrets) == 0 {
		return r.w.Write(p)
	}
	buf := p
	if len(r.hold) > 0 {
		buf = append(r.hold, p...)
	}
	for _, s := range r.secrets {
		buf = bytes.ReplaceAll(buf, s, []byte(redacted))
	}
	keep := r.pending(buf)
	if _, err := r.w.Write(buf[:len(buf)-keep]); err != nil {
		return 0, err
	}
	r.hold = append(r.hold[:0:0], buf[len(buf)-keep:]...)
	return len(p), nil
}

// pending is the length of the longest tail of buf that begins a secret.
func (r *redactor) pending(buf []byte) int {
	best := 0
	for _, s := range r.secrets {
		for n := min(len(s)-1, len(buf)); n > best; n-- {
			if bytes.HasSuffix(buf, s[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

func (r *redactor) Close() error {
	if len(r.hold) == 0 {
		return nil
	}
	_, err := r.w.Write(r.hold)
	r.hold = nil
	return err
}

// errReplyTooLarge stops a runaway agent before it fills the disk.
var errReplyTooLarge = errors.New("reply too large")

// meter counts what an agent writes to one of its outputs; past limit the
// reply fails the run, the rest of stderr is dropped.
type meter struct {
	w        io.Writer
	n, limit int64
	drop     bool        // past the limit: discard instead of failing
	exceeded func()      // called once when a failing limit is passed
	onWrite  func(int64) // called with the running total after each write
	failed   bool
}

func (m *meter) Write(p []byte) (int, error) {
	if m.failed {
		return 0, errReplyTooLarge
	}
	room := m.limit - m.n
	m.n += int64(len(p))
	if m.onWrite != nil {
		m.onWrite(m.n)
	}
	if _, err := m.w.Write(p[:min(max(room, 0), int64(len(p)))]); err != nil {
		return 0, err
	}
	if int64(len(p)) <= room || m.drop {
		return len(p), nil
	}
	m.failed = true
	if m.exceeded != nil {
		m.exceeded()
	}
	return 0, fmt.Errorf("%w: more than %d bytes", errReplyTooLarge, m.limit)
}
