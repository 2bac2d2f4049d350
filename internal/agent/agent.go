// Package agent gets courier's replies from an LLM without a person: a
// program that reads the request on stdin and writes the reply on stdout
// (a coding CLI such as claude or codex, llm, ollama, a script) or an
// OpenAI-compatible chat-completions endpoint. It implements the
// conductor-loop agent protocol: an Agent executes one run described by a
// RunContext, with its output captured in files; Runs keeps every request
// sent to an agent as a run folder of the session, so that a reply is used
// only once its run has completed and a crash never hands over half a
// reply.
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Agent is one backend, as the conductor-loop agent protocol defines it.
type Agent interface {
	// Execute runs the agent once: the reply goes to runCtx.StdoutPath,
	// diagnostics to StderrPath; a non-zero exit is an *ExitError.
	Execute(ctx context.Context, runCtx *RunContext) error

	// Type names the backend in lower case: "claude", "command", "openai".
	Type() string
}

// RunContext is what one run of an agent needs.
type RunContext struct {
	RunID       string            // unique id of the run, YYYYMMDD-HHMMSSmmm-PID (see NewRunID)
	ProjectID   string            // the project: the workspace's folder name
	TaskID      string            // the task: the session id
	Prompt      string            // the request text; may be empty
	WorkingDir  string            // absolute folder the agent works in
	StdoutPath  string            // absolute path of the file that receives the agent's stdout (the reply)
	StderrPath  string            // absolute path of the file that receives its stderr
	Environment map[string]string // variables set over the process environment
}

var runIDPattern = regexp.MustCompile(`^\d{8}-\d{9}-\d+$`)

// NewRunID returns the protocol's YYYYMMDD-HHMMSSmmm-PID, in UTC so
// that ids sort in the order runs started.
func NewRunID(t time.Time, pid int) string {
	t = t.UTC()
	return fmt.Sprintf("%s%03d-%d", t.Format("20060102-150405"), t.Nanosecond()/int(time.Millisecond), pid)
}

// ValidRunID reports whether id has the shape NewRunID gives.
func ValidRunID(id string) bool { return runIDPattern.MatchString(id) }

// Validate checks the fields the protocol requires; each error names the
// field.
func (rc *RunContext) Validate() error {
	if rc == nil {
		return errors.New("run context is nil")
	}
	if rc.RunID == "" {
		return errors.New("run context: RunID is empty")
	}
	if !ValidRunID(rc.RunID) {
		return fmt.Errorf("run context: RunID %q is not of the form YYYYMMDD-HHMMSSmmm-PID", rc.RunID)
	}
	for _, f := range []struct{ name, path string }{{"WorkingDir", rc.WorkingDir}, {"StdoutPath", rc.StdoutPath}, {"StderrPath", rc.StderrPath}} {
		if f.path == "" {
			return fmt.Errorf("run context: %s is empty", f.name)
		}
		if !filepath.IsAbs(f.path) {
			return fmt.Errorf("run context: %s %q is not an absolute path", f.name, f.path)
		}
	}
	if fi, err := os.Stat(rc.WorkingDir); err != nil {
		return fmt.Errorf("run context: WorkingDir: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("run context: WorkingDir %q is not a folder", rc.WorkingDir)
	}
	if rc.StdoutPath == rc.StderrPath {
		return errors.New("run context: StdoutPath and StderrPath are the same file")
	}
	return nil
}

// ExitError is an agent program that exited with a code other than 0, or
// was killed by signal N (Code 128+N).
type ExitError struct {
	Agent  string // the agent's type
	Code   int
	Signal string // "SIGKILL", if a signal killed it
	Detail string // its last line on stderr, so the person sees why
	Err    error
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%s exited with code %d", e.Agent, e.Code)
	if e.Signal != "" {
		msg = fmt.Sprintf("%s was killed by %s (exit code %d)", e.Agent, e.Signal, e.Code)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *ExitError) Unwrap() error { return e.Err }

// recoverPanic turns a panic into *err: a backend must not take courier
// down mid-session.
func recoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("agent panic: %v", r)
	}
}

// SetupError is an agent that cannot work as it is set up (no model, a
// wrong key, an unknown name); Fix says what to change.
type SetupError struct {
	Err error
	Fix string
}

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

func setupError(err error, fix string) error { return &SetupError{Err: err, Fix: fix} }
