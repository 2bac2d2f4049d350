package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/history"
)

// Approver puts a command the policy will not run alone to the person.
type Approver interface {
	Approve(ctx context.Context, q Question) (Decision, error)
}

// Question is what the person is asked about.
type Question struct {
	Session  string
	Sequence int
	Index    int
	Command  string
	// Env are the variables the command is given besides its text, as
	// shell assignments separated by spaces ("" for none).
	Env string
	// Reason is the policy's reason for asking; Covers what approving all
	// like it would cover.
	Reason, Covers string
}

// Answer is the person's answer to a question.
type Answer int

// The answers.
const (
	// Stop leaves the question open and stops the turn: the session waits
	// for 'courier approve' or 'courier deny' (what happens without a
	// terminal).
	Stop Answer = iota
	Approve
	// ApproveAll approves the command and every later one like it in the
	// session.
	ApproveAll
	Deny
	// Later leaves the question to be answered elsewhere ('courier approve'
	// in another terminal); a serving runner waits for that answer.
	Later
)

// Decision is an answer with the reason given for a denial.
type Decision struct {
	Answer Answer
	Reason string
}

// Decides reports whether d settles the question (approves or denies);
// any other answer leaves it open.
func (d Decision) Decides() bool {
	return d.Answer == Approve || d.Answer == ApproveAll || d.Answer == Deny
}

// question is a pending question as the journal's decision refers to it.
type question history.Pending

func pendingOf(st *history.State) question { return question(*st.Pending) }

// decided is the decision note answering the question with d, which must
// decide it.
func (q question) decided(d Decision) decisionNote {
	approved := d.Answer == Approve || d.Answer == ApproveAll
	return decisionNote{Sequence: q.Sequence, Index: q.Index, Approved: approved, All: d.Answer == ApproveAll, Reason: d.Reason}
}

// Yes approves everything (the yes setting).
type Yes struct{}

// Approve implements Approver.
func (Yes) Approve(context.Context, Question) (Decision, error) {
	return Decision{Answer: Approve}, nil
}

// decisionNote is a decision written by a courier process that could not
// take the session's lock because another one holds it, waiting for that
// very decision. The holder journals it; a later holder does if the first
// went away.
type decisionNote struct {
	Sequence int    `json:"sequence"`
	Index    int    `json:"index"`
	Approved bool   `json:"approved"`
	All      bool   `json:"all"`
	Reason   string `json:"reason,omitempty"`
}

func (r *Runner) decisionPath(id string) string {
	return filepath.Join(r.cfg.Paths.Sessions, id+".decision")
}

// readDecision returns the note left for the session's pending question,
// removing a note that answers another question.
func (r *Runner) readDecision(st *history.State) (decisionNote, bool, error) {
	p := r.decisionPath(st.SessionID)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return decisionNote{}, false, nil
	}
	if err != nil {
		return decisionNote{}, false, fmt.Errorf("read decision: %w", err)
	}
	var n decisionNote
	if json.Unmarshal(data, &n) != nil || st.Pending == nil || n.Sequence != st.Pending.Sequence || n.Index != st.Pending.Index {
		os.Remove(p)
		return decisionNote{}, false, nil
	}
	return n, true, nil
}

// leaveDecision writes a decision for the process holding the session.
func (r *Runner) leaveDecision(id string, n decisionNote) error {
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(r.decisionPath(id), data, 0o644); err != nil {
		return fmt.Errorf("leave decision: %w", err)
	}
	return nil
}

// decisionPoll is how often a runner waiting for a decision made in
// another terminal looks for it.
const decisionPoll = 200 * time.Millisecond
