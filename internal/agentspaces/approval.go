package agentspaces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// Decision answers an approvalRequired event.
type Decision string

const (
	Approved Decision = "approved"
	Denied   Decision = "denied"
)

// Approval is the answer to a paused run.
type Approval struct {
	OperationID string   `json:"operationId,omitempty"` // "" from a userMessage: whatever is waiting
	Decision    Decision `json:"decision"`
	Reason      string   `json:"reason,omitempty"`
}

// DecodeApproval reads the answer to a paused run in either of the
// protocol's forms, comments and trailing commas allowed (its own example
// has one):
//
//	{"approval": {"operationId": "shell-1", "decision": "approved", "reason": "..."}}
//	{"type": "userMessage", "content": "approved"}
//
// the latter maybe in an events list, its content "approved" or "denied"
// in any case.
func DecodeApproval(data []byte) (Approval, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !json.Valid(data) {
		if strict, ok := relaxed(data); ok {
			data = strict
		}
	}
	var msg struct {
		Approval *struct {
			OperationID string  `json:"operationId"`
			Decision    *string `json:"decision"`
			Reason      string  `json:"reason"`
		} `json:"approval"`
		Type    string  `json:"type"`
		Content *string `json:"content"`
		Events  []struct {
			Type    string  `json:"type"`
			Content *string `json:"content"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return Approval{}, fmt.Errorf("the approval is not a JSON object: %w", err)
	}
	if a := msg.Approval; a != nil {
		if a.OperationID == "" {
			return Approval{}, fmt.Errorf(`the approval has no "operationId"`)
		}
		if a.Decision == nil {
			return Approval{}, fmt.Errorf(`the approval has no "decision"; it must be "approved" or "denied"`)
		}
		d, err := decision(*a.Decision, true)
		return Approval{OperationID: a.OperationID, Decision: d, Reason: a.Reason}, err
	}
	typ, content := msg.Type, msg.Content
	if len(msg.Events) == 1 {
		typ, content = msg.Events[0].Type, msg.Events[0].Content
	}
	if typ != string(EventUserMessage) || content == nil {
		return Approval{}, fmt.Errorf(`expected {"approval": {"operationId": ..., "decision": "approved" | "denied"}} or a userMessage saying "approved" or "denied"`)
	}
	d, err := decision(*content, false)
	if err != nil {
		return Approval{}, err
	}
	return Approval{Decision: d}, nil
}

// decision reads a decision; exact is the structured form.
func decision(s string, exact bool) (Decision, error) {
	if !exact {
		s = strings.ToLower(strings.TrimSpace(s))
	}
	switch d := Decision(s); d {
	case Approved, Denied:
		return d, nil
	}
	return "", fmt.Errorf(`the decision must be "approved" or "denied", not %q`, human.Cut(s, 40))
}
