// Package session keeps courier's durable record of a task: the session
// state file, the per-turn journal that makes processing a reply crash-safe,
// the snapshots that make a turn reversible, and the lock that keeps two
// processes off one session.
package session

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

// State is what sessions/<id>.json holds. The first eight fields are the
// CodingAgent protocol's; the rest are courier's own.
type State struct {
	SessionID        string           `json:"sessionId"`
	Task             string           `json:"task"`
	SequenceNumber   int              `json:"sequenceNumber"`
	IsComplete       bool             `json:"isComplete"`
	CreatedAt        time.Time        `json:"createdAt"`
	UpdatedAt        time.Time        `json:"updatedAt"`
	LastResults      []command.Result `json:"lastResults"`
	ReadFileRequests []ReadRequest    `json:"readFileRequests"`

	// Workspace is the absolute folder the session works on.
	Workspace string `json:"workspace"`
	// Notices are told to the LLM at the top of the next outbox's results
	// (an undo, a reply without commands).
	Notices []string `json:"notices,omitempty"`
	// Replies is where sessions written by earlier courier versions listed
	// every applied reply. It is read, moved into replies.jsonl at the next
	// save and never written again: the state keeps no list that grows
	// with the turns.
	Replies []ReplyRecord `json:"replies,omitempty"`
	// Format is CurrentFormat for sessions that keep UndoTop; 0 for
	// sessions written before, whose undo chain is found by reading their
	// turns once.
	Format int `json:"format,omitempty"`
	// UndoTop is the turn 'courier undo' reverts next: the newest turn
	// with file changes not undone, 0 when there is none.
	UndoTop int `json:"undoTop,omitempty"`
	// Undoing is set while an undo is under way (saved before any file is
	// put back, cleared when the undo is committed).
	Undoing *Undoing `json:"undoing,omitempty"`
	// Summary is the DONE text once the session is complete.
	Summary string `json:"summary,omitempty"`
	// Includes are glob patterns whose files the first outbox attaches.
	Includes []string `json:"includes,omitempty"`
	// ApprovedRules are "approve all like it" answers for this session.
	ApprovedRules []string `json:"approvedRules,omitempty"`
	// Pending is set while a turn waits for the person's approval.
	Pending *Pending `json:"pending,omitempty"`
	// Protocol names the front end the session speaks; "" is the tag
	// protocol.
	Protocol string `json:"protocol,omitempty"`
	// Messages are the person's words for the next request.
	Messages []string `json:"messages,omitempty"`
	// FollowUps are the tasks the person added after the session was
	// complete ('courier continue'), oldest first.
	FollowUps []string `json:"followUps,omitempty"`
	// NewChat is set when the next request goes to a fresh chat: it carries
	// the full protocol and the machine's description again.
	NewChat bool `json:"newChat,omitempty"`
	// Prompt is the next request's task when it is a follow-up.
	Prompt string `json:"prompt,omitempty"`
	// Environment describes the machine for the first request of a chat;
	// it is kept so that a request written again reads the same.
	Environment string `json:"environment,omitempty"`
	// RequestSize and RequestSum (CRC-32C) are those of the current
	// request as it was written (0 in sessions written before they were
	// kept). A request is not synced to the disk, since it can be written
	// again from the state: one a power cut left missing, short or
	// holding zeros no longer matches them, and is written again.
	RequestSize int64  `json:"requestSize,omitempty"`
	RequestSum  uint32 `json:"requestSum,omitempty"`
	// IgnoreCut are the ignore files courier said it uses only part of (see
	// workspace.IgnoreCutNote): it says so once a session, not every turn.
	IgnoreCut []string `json:"ignoreCut,omitempty"`
	// Run is set for an Agent Spaces run ('courier ops'): a session of
	// one turn, whose operations came from a program, not a chat. It writes
	// no requests and is complete when its turn is.
	Run bool `json:"run,omitempty"`
	// Preset names the policy preset a run's commands are checked by
	// (standard, permissive or restrictive); "" is the settings' policy.
	Preset string `json:"preset,omitempty"`
}

// ReadRequest is a READ_FILE waiting to be shown in the next outbox. It is
// stored as a plain path string when it has no line range, as the protocol
// describes, and as an object otherwise.
type ReadRequest struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
}

// MarshalJSON writes a plain path when there is no range.
func (r ReadRequest) MarshalJSON() ([]byte, error) {
	if r.StartLine == 0 && r.EndLine == 0 {
		return json.Marshal(r.Path)
	}
	type plain ReadRequest
	return json.Marshal(plain(r))
}

// UnmarshalJSON reads both forms MarshalJSON writes.
func (r *ReadRequest) UnmarshalJSON(data []byte) error {
	var p string
	if err := json.Unmarshal(data, &p); err == nil {
		*r = ReadRequest{Path: p}
		return nil
	}
	type plain ReadRequest
	var v plain
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	*r = ReadRequest(v)
	return nil
}

// ReplyRecord remembers one applied reply.
type ReplyRecord struct {
	// Hash is the SHA-256 of the decoded reply text, so the same reply
	// re-saved with other line endings or encoding is still recognised.
	Hash string `json:"hash"`
	// Sequence is the outbox the reply answered.
	Sequence  int       `json:"sequence"`
	File      string    `json:"file"`
	AppliedAt time.Time `json:"appliedAt"`
}

// CurrentFormat is the Format of sessions this courier writes.
const CurrentFormat = 2

// Undoing is an undo under way.
type Undoing struct {
	// Turn is the turn whose file changes are being reverted.
	Turn int `json:"turn"`
	// Below is the turn undo reverts after it, UndoTop once this one is
	// committed.
	Below int `json:"below"`
}

// Pending describes a command waiting for the person's decision.
type Pending struct {
	Sequence int    `json:"sequence"`
	Index    int    `json:"index"`
	Command  string `json:"command"`
	// Env are the variables the command is given besides its text, as
	// shell assignments (policy.Assignments) separated by spaces.
	Env    string `json:"env,omitempty"`
	Reason string `json:"reason"`
	Rule   string `json:"rule,omitempty"`
}
