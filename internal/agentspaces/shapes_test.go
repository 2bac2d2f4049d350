package agentspaces

import (
	"encoding/json"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

// The protocol's shapes read back: courier only writes events and only
// reads operations, but the conformance suite checks that what it reads and
// writes has the document's exact shape by reading events and writing
// operations too.

// UnmarshalJSON reads an event as MarshalJSON writes it, or as another
// implementation of the protocol does (a "null" operationId is absent).
func (e *Event) UnmarshalJSON(data []byte) error {
	type plain Event
	var aux struct {
		plain
		OperationID *string        `json:"operationId"`
		Details     map[string]any `json:"details"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*e = Event(aux.plain)
	if aux.OperationID != nil {
		e.OperationID = *aux.OperationID
	}
	switch {
	case e.Type == EventError:
		e.ErrorDetails = aux.Details
	case aux.Details != nil:
		d := ApprovalDetails{}
		d.Command, _ = aux.Details["command"].(string)
		d.Path, _ = aux.Details["path"].(string)
		d.Policy, _ = aux.Details["policy"].(string)
		e.Details = &d
	}
	return nil
}

// MarshalJSON writes the fields of the operation's type, in the order the
// protocol lists them, so that a required field that is empty (a message
// with "content": "") is still written.
func (o Operation) MarshalJSON() ([]byte, error) {
	var w objectWriter
	w.field("type", o.Type)
	if o.ID != "" {
		w.field("id", o.ID)
	}
	switch o.Type {
	case OpMessage:
		w.field("content", o.Content)
	case OpCreateFile:
		w.field("path", o.Path)
		w.field("content", o.Content)
		if o.Encoding != "" {
			w.field("encoding", o.Encoding)
		}
		if o.Overwrite != nil {
			w.field("overwrite", *o.Overwrite)
		}
	case OpReadFile:
		w.field("path", o.Path)
		if o.Encoding != "" {
			w.field("encoding", o.Encoding)
		}
	case OpEditFile:
		w.field("path", o.Path)
		edits := o.Edits
		if edits == nil {
			edits = []FileEdit{}
		}
		w.field("edits", edits)
	case OpDeleteFile:
		w.field("path", o.Path)
	case OpShell:
		w.field("command", o.Command)
		if o.Cwd != "" {
			w.field("cwd", o.Cwd)
		}
		if o.Timeout != 0 {
			w.field("timeout", o.Timeout)
		}
		if o.Env != nil {
			w.field("env", o.Env)
		}
	}
	return w.close()
}

// Operation is one operation as the protocol defines it. Which fields apply
// depends on Type:
//
//	message     Content
//	createFile  Path, Content, Encoding, Overwrite
//	readFile    Path, Encoding
//	editFile    Path, Edits
//	deleteFile  Path
//	shell       Command, Cwd, Timeout (milliseconds), Env
//
// Optional fields are kept as given (an explicit "overwrite": false stays).
type Operation struct {
	Type      OpType            `json:"type"`
	ID        string            `json:"id,omitempty"`
	Content   string            `json:"content,omitempty"`
	Path      string            `json:"path,omitempty"`
	Encoding  Encoding          `json:"encoding,omitempty"`
	Overwrite *bool             `json:"overwrite,omitempty"`
	Edits     []FileEdit        `json:"edits,omitempty"`
	Command   string            `json:"command,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	Timeout   int               `json:"timeout,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// FileEdit is one search/replace pair of an editFile operation.
type FileEdit struct {
	OldContent string `json:"oldContent"`
	NewContent string `json:"newContent"`
}

// operationOf is the operation that validate mapped onto c.
func operationOf(typ OpType, c command.Command) Operation {
	o := Operation{Type: typ, ID: c.ID, Content: c.Text, Path: c.Path, Command: c.Command, Cwd: c.Dir,
		Timeout: int(time.Duration(c.Timeout).Milliseconds()), Env: c.Env}
	if c.Type == command.CreateFile {
		o.Content = c.Content
		overwrite := !c.NoOverwrite
		o.Overwrite = &overwrite
	}
	if c.Encoding == command.Base64 {
		o.Encoding = Base64
	}
	for _, e := range c.Edits {
		o.Edits = append(o.Edits, FileEdit{OldContent: e.Search, NewContent: e.Replace})
	}
	return o
}
