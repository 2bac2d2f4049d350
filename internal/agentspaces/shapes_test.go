package agentspaces

import "encoding/json"

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
