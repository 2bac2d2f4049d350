package agentspaces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
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
	w.field("type", e.Type)
	if e.OperationID != "" || e.Type == EventApprovalRequired {
		w.field("operationId", e.OperationID)
	}
	if !e.Timestamp.IsZero() {
		w.field("timestamp", e.Timestamp.UTC().Format(TimestampFormat))
	}
	switch e.Type {
	case EventUserMessage:
		w.field("content", e.Content)
	case EventMessage:
		w.field("success", true)
	case EventCreateFile, EventReadFile, EventEditFile, EventDeleteFile:
		e.writeFileFields(&w)
	case EventShell:
		e.writeShellFields(&w)
	case EventApprovalRequired:
		w.field("operationType", e.OperationType)
		w.field("reason", e.Reason)
		d := ApprovalDetails{}
		if e.Details != nil {
			d = *e.Details
		}
		w.field("details", d)
	case EventPolicyDenied:
		w.field("operationType", e.OperationType)
		w.field("reason", e.Reason)
		if e.Suggestion != "" {
			w.field("suggestion", e.Suggestion)
		}
	case EventError:
		w.field("category", e.Category)
		w.field("message", e.Message)
		if e.ErrorDetails != nil {
			w.field("details", e.ErrorDetails)
		}
	}
	return w.close()
}

func (e Event) writeFileFields(w *objectWriter) {
	w.field("path", e.Path)
	w.field("success", e.Success)
	if !e.Success {
		if e.Error != "" {
			w.field("error", e.Error)
		}
		return
	}
	switch e.Type {
	case EventCreateFile:
		w.field("bytesWritten", e.BytesWritten)
	case EventReadFile:
		w.field("content", e.Content)
		if e.Note != "" {
			w.field("note", e.Note)
		}
		if e.Encoding != "" {
			w.field("encoding", e.Encoding)
			w.field("size", e.Size)
		}
	case EventEditFile:
		w.field("editsApplied", e.EditsApplied)
	}
}

// writeShellFields writes a shell event; a timeout shows only streams
// that are not empty, so a silent one has the protocol's exact shape.
func (e Event) writeShellFields(w *objectWriter) {
	w.field("command", e.Command)
	w.field("success", e.Success)
	if e.TimedOut {
		w.field("timedOut", true)
	}
	if e.ExitCode != nil {
		w.field("exitCode", *e.ExitCode)
	}
	ran := e.ExitCode != nil
	if ran && (!e.TimedOut || e.Stdout != "") {
		w.field("stdout", e.Stdout)
	}
	if ran && (!e.TimedOut || e.Stderr != "") {
		w.field("stderr", e.Stderr)
	}
	if ran {
		w.field("durationMs", e.DurationMS)
	}
	if e.Error != "" {
		w.field("error", e.Error)
	}
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
