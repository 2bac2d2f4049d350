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
	"strings"
	"sync/atomic"
	"time"

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/termtext"
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

// EventKind says what an Event reports, in the words of runner.RunKind.
type EventKind string

const (
	EventStart    EventKind = "start"    // the run's folder is written and the agent is starting
	EventProgress EventKind = "progress" // more of the reply arrived (Bytes, Tokens)
	EventRetry    EventKind = "retry"    // the request failed (Err); attempt Attempt follows after Wait
	EventEnd      EventKind = "end"      // the run is over and its run-info.json final (Status, Err)
	EventRestart  EventKind = "restart"  // the run failed (Err); the restart loop starts run Attempt after Wait
)

// Event is what a Request's Observer hears about a run as it happens.
type Event struct {
	Kind    EventKind
	RunID   string
	Agent   string // the agent's type
	Model   string // "" when the backend has none
	Elapsed time.Duration
	Bytes   int64         // bytes of reply received so far
	Tokens  int           // tokens received so far, when the backend knows
	Attempt int           // EventRetry, EventRestart: the attempt about to be made (2 for the first retry)
	Wait    time.Duration // EventRetry, EventRestart: the pause before it
	Status  string        // EventEnd: StatusCompleted or StatusFailed
	Err     error         // EventRetry, EventRestart: what failed; EventEnd: why the run failed
}

// progressEvery throttles progress events to what a console redraws.
const progressEvery = 200 * time.Millisecond

// reporter sends one run's events to an observer, totals filled in and
// progress throttled. The observer is called only on the goroutine running
// the agent, so its panic fails the run; only bytes may be set from
// elsewhere.
type reporter struct {
	obs      func(Event) // nil for none
	base     Event       // RunID, Agent, Model
	start    time.Time
	lastSent time.Time
	sent     int64 // bytes at the last progress event, -1 before any
	bytes    atomic.Int64
	tokens   int
	started  func(pid int) // learns the agent program's pid, for run-info.json
}

func newReporter(obs func(Event), runID, agentType, model string) *reporter {
	return &reporter{obs: obs, base: Event{RunID: runID, Agent: agentType, Model: model}, start: time.Now(), sent: -1}
}

func (r *reporter) event(e Event) {
	if r.obs != nil {
		e.RunID, e.Agent, e.Model = r.base.RunID, r.base.Agent, r.base.Model
		e.Elapsed, e.Bytes, e.Tokens = time.Since(r.start), r.bytes.Load(), r.tokens
		r.obs(e)
	}
}

// safeEvent reports e, turning a panic of the observer into an error.
func (r *reporter) safeEvent(e Event) (err error) {
	defer recoverPanic(&err)
	r.event(e)
	return nil
}

// tick sends a progress event if something arrived, at most every
// progressEvery; flush sends it now.
func (r *reporter) tick() {
	if time.Since(r.lastSent) >= progressEvery {
		r.flush()
	}
}

func (r *reporter) flush() {
	if n := r.bytes.Load(); n != r.sent {
		r.sent, r.lastSent = n, time.Now()
		r.event(Event{Kind: EventProgress})
	}
}

func (r *reporter) processStarted(pid int) {
	if r.started != nil {
		r.started(pid)
	}
}

// detailMax caps the text an error quotes from an agent or a server.
const detailMax = 300

// csi is a colour code or other CSI sequence, or a lone escape.
var csi = regexp.MustCompile("\x1b(\\[[^\x40-\x7e]*[\x40-\x7e]?)?")

// cleanLine makes hostile text from an agent or a server one safe line of
// an error: colour codes dropped, whitespace folded, cut to detailMax,
// nothing that could move the cursor or forge a line of courier's own.
func cleanLine(s string) string {
	return termtext.Safe(human.OneLine(csi.ReplaceAllString(s, ""), detailMax))
}

// lastLine is the last non-blank line of text, cleaned for an error.
func lastLine(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	return cleanLine(text[strings.LastIndexByte(text, '\n')+1:])
}
