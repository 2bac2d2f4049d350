package agentspaces

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

// RunStatus is the status of an events message.
type RunStatus string

const (
	StatusCompleted        RunStatus = "completed"
	StatusAwaitingApproval RunStatus = "awaiting_approval"
	StatusError            RunStatus = "error"
)

// EventsMessage is what courier answers: a run's events, in order.
type EventsMessage struct {
	ProtocolVersion string    `json:"protocolVersion"`
	RunID           string    `json:"runId"`
	Status          RunStatus `json:"status"`
	Events          []Event   `json:"events"`
}

// EventType names an event; operation events share the operation's name.
type EventType string

const (
	EventUserMessage      EventType = "userMessage"
	EventMessage          EventType = "message"
	EventCreateFile       EventType = "createFile"
	EventReadFile         EventType = "readFile"
	EventEditFile         EventType = "editFile"
	EventDeleteFile       EventType = "deleteFile"
	EventShell            EventType = "shell"
	EventApprovalRequired EventType = "approvalRequired"
	EventPolicyDenied     EventType = "policyDenied"
	EventError            EventType = "error"
)

// Category classifies an error event.
type Category string

// The error categories courier sends; a refusal is a policyDenied event.
const (
	CategoryValidation Category = "validation"
	CategoryExecution  Category = "execution"
	CategoryTimeout    Category = "timeout"
	CategorySystem     Category = "system"
)

// Event is one event of the protocol; MarshalJSON writes the fields its
// Type has.
type Event struct {
	Type        EventType `json:"type"`
	OperationID string    `json:"operationId,omitempty"`
	Timestamp   time.Time `json:"timestamp,omitzero"`

	Path         string   `json:"path,omitempty"`
	Success      bool     `json:"success,omitempty"`
	Error        string   `json:"error,omitempty"`
	Content      string   `json:"content,omitempty"` // a userMessage's text or a readFile's content
	Note         string   `json:"note,omitempty"`    // what a chat request left out of a readFile's content
	Encoding     Encoding `json:"encoding,omitempty"`
	Size         int64    `json:"size,omitempty"`
	BytesWritten int64    `json:"bytesWritten,omitempty"`
	EditsApplied int      `json:"editsApplied,omitempty"`

	Command    string `json:"command,omitempty"`
	ExitCode   *int   `json:"exitCode,omitempty"` // a shell command that ran (124: timed out)
	Stdout     string `json:"stdout,omitempty"`
	Stderr     string `json:"stderr,omitempty"`
	DurationMS int64  `json:"durationMs,omitempty"`
	TimedOut   bool   `json:"timedOut,omitempty"`

	OperationType OpType           `json:"operationType,omitempty"`
	Reason        string           `json:"reason,omitempty"`
	Details       *ApprovalDetails `json:"details,omitempty"`
	Suggestion    string           `json:"suggestion,omitempty"`

	Category     Category       `json:"category,omitempty"`
	Message      string         `json:"message,omitempty"`
	ErrorDetails map[string]any `json:"-"` // nil leaves them out
}

// ApprovalDetails say what an approvalRequired event is about.
type ApprovalDetails struct {
	Command string            `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"` // approved with the command
	Path    string            `json:"path,omitempty"`
	Policy  string            `json:"policy,omitempty"` // the policy rules that asked, e.g. "rm -r"
}

// TimestampFormat is JavaScript's toISOString: UTC with milliseconds.
const TimestampFormat = "2006-01-02T15:04:05.000Z"

// MarshalJSON writes the fields the event's type has in the protocol's
// order, with the false, zero and empty values it shows.
func (e Event) MarshalJSON() ([]byte, error) {
	var w objectWriter
	file := e.Type == EventCreateFile || e.Type == EventReadFile || e.Type == EventEditFile || e.Type == EventDeleteFile
	read := e.Type == EventReadFile && e.Success
	shell, ran := e.Type == EventShell, e.Type == EventShell && e.ExitCode != nil
	refusal := e.Type == EventApprovalRequired || e.Type == EventPolicyDenied
	w.add(true, "type", e.Type)
	w.add(e.OperationID != "" || e.Type == EventApprovalRequired, "operationId", e.OperationID)
	w.add(!e.Timestamp.IsZero(), "timestamp", e.Timestamp.UTC().Format(TimestampFormat))
	w.add(e.Type == EventUserMessage, "content", e.Content)
	w.add(e.Type == EventMessage, "success", true)
	w.add(shell, "command", e.Command)
	w.add(file, "path", e.Path)
	w.add(file || shell, "success", e.Success)
	w.add(file && !e.Success && e.Error != "", "error", e.Error)
	w.add(e.Type == EventCreateFile && e.Success, "bytesWritten", e.BytesWritten)
	w.add(read, "content", e.Content)
	w.add(read && e.Note != "", "note", e.Note)
	w.add(read && e.Encoding != "", "encoding", e.Encoding)
	w.add(read && e.Encoding != "", "size", e.Size)
	w.add(e.Type == EventEditFile && e.Success, "editsApplied", e.EditsApplied)
	// A timeout shows only streams that are not empty, so that a silent
	// one has the protocol's exact shape.
	w.add(shell && e.TimedOut, "timedOut", true)
	w.add(ran, "exitCode", e.ExitCode)
	w.add(ran && (!e.TimedOut || e.Stdout != ""), "stdout", e.Stdout)
	w.add(ran && (!e.TimedOut || e.Stderr != ""), "stderr", e.Stderr)
	w.add(ran, "durationMs", e.DurationMS)
	w.add(shell && e.Error != "", "error", e.Error)
	w.add(refusal, "operationType", e.OperationType)
	w.add(refusal, "reason", e.Reason)
	w.add(e.Type == EventApprovalRequired, "details", cmp.Or(e.Details, &ApprovalDetails{}))
	w.add(e.Type == EventPolicyDenied && e.Suggestion != "", "suggestion", e.Suggestion)
	w.add(e.Type == EventError, "category", e.Category)
	w.add(e.Type == EventError, "message", e.Message)
	w.add(e.Type == EventError && e.ErrorDetails != nil, "details", e.ErrorDetails)
	return w.close()
}

// FormatEvents writes an events message as indented JSON, <, > and &
// unescaped.
func FormatEvents(m EventsMessage) (string, error) {
	if m.Events == nil {
		m.Events = []Event{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return "", fmt.Errorf("encoding the events message: %w", err)
	}
	return b.String(), nil
}

// The protocol's exact error texts.
const (
	errExists   = "File already exists"
	errNotFound = "File not found"
)

// Suggestions of policyDenied events, by who refused.
const (
	suggestPolicy  = "Do the task without this command, or ask the user in a message operation to run it themselves"
	suggestPerson  = "Find another way, or explain in a message operation why it is needed"
	suggestOutside = "Use a path inside the workspace, relative to its root"
)

// ResultEvent is the event for command c carried out with result r, at
// r.Time or else now: a validation error for a command.ParseError,
// policyDenied for a denial or a path outside the workspace, an execution
// or timeout error for an interruption, else the operation's own event.
func ResultEvent(c command.Command, r command.Result, now time.Time) Event {
	at := r.Time
	if at.IsZero() {
		at = now
	}
	e := Event{OperationID: c.ID, Timestamp: at}
	typ := opTypeOf(c.Type)
	switch {
	case c.Type == command.ParseError:
		e.Type, e.Category, e.Message = EventError, CategoryValidation, c.Error
		if e.Message == "" {
			e.Message = r.Summary
		}
		return e
	case r.Status == command.Denied, r.Status == command.Rejected:
		return denial(e, typ, r)
	case r.Status == command.Interrupted:
		e.Type, e.Category, e.Message = EventError, CategoryExecution, r.Summary
		if r.Cause == command.CauseDeadline {
			e.Category = CategoryTimeout
		}
		e.ErrorDetails = map[string]any{"operationType": string(typ)}
		return e
	}
	e.Type, e.Path = EventType(typ), c.Path
	e.Success = r.Status == command.OK
	if !e.Success {
		e.Error = failure(r)
	}
	switch c.Type {
	case command.Message, command.Done:
		e.Success = true
	case command.CreateFile:
		e.BytesWritten = contentSize(c.Content, c.Encoding)
	case command.ReadFile:
		e.Content, e.Size, e.Encoding = r.Content, r.Size, UTF8
		if r.Encoding == command.Base64 {
			e.Encoding = Base64
		}
	case command.EditFile:
		e.EditsApplied = len(c.Edits)
	case command.RunCommand:
		shellFields(&e, c, r)
	}
	return e
}

// TimeoutExitCode is a timed-out command's exit code, as timeout(1) has it.
const TimeoutExitCode = 124

func shellFields(e *Event, c command.Command, r command.Result) {
	e.Command = c.Command
	e.Stdout, e.Stderr = r.Stdout, r.Stderr
	if !c.SplitOutput {
		e.Stdout, e.Stderr = r.Output, ""
	}
	switch {
	case r.TimedOut:
		e.ExitCode, e.TimedOut, e.Error = new(TimeoutExitCode), true, ""
	case r.ExitCode != nil:
		e.ExitCode, e.Error = new(*r.ExitCode), ""
	}
	if e.ExitCode != nil {
		e.DurationMS = r.DurationMS
	}
}

func denial(e Event, typ OpType, r command.Result) Event {
	e.Type, e.OperationType = EventPolicyDenied, typ
	e.Reason, e.Suggestion = r.Reason, suggestPolicy
	switch {
	case r.Status == command.Rejected:
		e.Suggestion = suggestOutside
	case r.Cause == command.CausePerson:
		e.Reason, e.Suggestion = "The user denied it", suggestPerson
		if r.Reason != "" {
			e.Reason += ": " + r.Reason
		}
	}
	if e.Reason == "" {
		// A result journaled before courier kept the reason apart.
		e.Reason = r.Summary
	}
	return e
}

// failure is the error text of a failed operation.
func failure(r command.Result) string {
	switch r.Cause {
	case command.CauseExists:
		return errExists
	case command.CauseNotFound:
		return errNotFound
	}
	if r.Output != "" && r.Type != command.RunCommand {
		return r.Summary + "\n" + r.Output
	}
	return r.Summary
}

// contentSize is the number of bytes (padded base64) content stands for.
func contentSize(content, encoding string) int64 {
	if encoding == command.Base64 {
		pad := len(content) - len(strings.TrimRight(content, "="))
		return int64(base64.StdEncoding.DecodedLen(len(content)) - pad)
	}
	return int64(len(content))
}

func opTypeOf(t command.Type) OpType {
	if t == command.Done {
		t = command.Message
	}
	if i := slices.Index(commandTypes(), t); i >= 0 {
		return opTypes()[i]
	}
	return ""
}

// Pause is a command at Index of its run waiting for the person's
// approval, the policy's reason and the rules behind it.
type Pause struct {
	Index  int
	Reason string
	Rule   string
}

// ApprovalEvent is the approvalRequired event for command c.
func ApprovalEvent(c command.Command, p Pause, now time.Time) Event {
	return Event{
		Type:          EventApprovalRequired,
		Timestamp:     now,
		OperationID:   ApprovalID(c, p.Index),
		OperationType: opTypeOf(c.Type),
		Reason:        p.Reason,
		Details:       &ApprovalDetails{Command: c.Command, Env: c.Env, Policy: p.Rule},
	}
}

// ApprovalID is the operation id an approval of command c, at index i of
// its run, names: "operation-N" (N from 1) for one sent without an id.
func ApprovalID(c command.Command, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("operation-%d", i+1)
}

// Outcome is what the engine did with a run, as far as it got.
type Outcome struct {
	Commands []command.Command
	Results  []command.Result // of Commands[i]; fewer when the run paused or stopped
	// From is the first command reported: 0, or after a resume the
	// answered command's index.
	From   int
	Paused *Pause // set when Commands[len(Results)] awaits approval
	// Answered: Commands[From] is the operation an approval answered, its
	// event carrying the id the approvalRequired event gave it.
	Answered bool
	// Err stopped the run: a *MessageError, else a system failure.
	Err error
}

// Events builds the events message of a run: one event per result from
// From on, then an approvalRequired event if it paused, or an error event
// if it stopped, and the status that says which.
func Events(runID string, o Outcome, now time.Time) EventsMessage {
	m := EventsMessage{ProtocolVersion: ProtocolVersion, RunID: runID, Status: StatusCompleted, Events: []Event{}}
	for i := o.From; i < len(o.Results) && i < len(o.Commands); i++ {
		e := ResultEvent(o.Commands[i], o.Results[i], now)
		if o.Answered && i == o.From {
			e.OperationID = ApprovalID(o.Commands[i], i)
		}
		m.Events = append(m.Events, e)
	}
	next := len(o.Results)
	switch {
	case o.Err != nil:
		m.Status = StatusError
		m.Events = append(m.Events, stopEvent(o, next, now))
	case o.Paused != nil && next < len(o.Commands):
		m.Status = StatusAwaitingApproval
		m.Events = append(m.Events, ApprovalEvent(o.Commands[next], *o.Paused, now))
	}
	return m
}

// stopEvent is the error event of a run that stopped: validation for a
// message that could not be run, else system, naming the operation it
// stopped at.
func stopEvent(o Outcome, next int, now time.Time) Event {
	e := Event{Type: EventError, Timestamp: now, Category: CategorySystem, Message: o.Err.Error()}
	var me *MessageError
	if errors.As(o.Err, &me) {
		e.Category = CategoryValidation
		if me.Line > 0 {
			e.ErrorDetails = map[string]any{"line": me.Line}
		}
		return e
	}
	e.Message = "courier stopped the run: " + withoutHostPaths(o.Err)
	if next < len(o.Commands) {
		c := o.Commands[next]
		e.OperationID = c.ID
		e.Message = fmt.Sprintf("courier stopped the run at this operation, which did not run, nor did the ones after it: %s", withoutHostPaths(o.Err))
		e.ErrorDetails = map[string]any{"operationType": string(opTypeOf(c.Type))}
		if c.Path != "" {
			e.ErrorDetails["path"] = c.Path
		}
	}
	return e
}

// withoutHostPaths words err with the absolute paths of its file system
// errors cut to "…/journal.jsonl": the host's layout is not the program's
// business.
func withoutHostPaths(err error) string {
	msg := err.Error()
	var pe *fs.PathError
	var le *os.LinkError
	var paths []string
	if errors.As(err, &pe) {
		paths = append(paths, pe.Path)
	}
	if errors.As(err, &le) {
		paths = append(paths, le.Old, le.New)
	}
	for _, p := range paths {
		if filepath.IsAbs(p) {
			msg = strings.ReplaceAll(msg, p, "…/"+filepath.Base(p))
		}
	}
	return msg
}
