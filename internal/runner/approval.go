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

// Question is what the person is asked about: a command, its variables
// as shell assignments, why the policy asks and what "all like it" would
// cover.
type Question struct {
	Session                      string
	Sequence, Index              int
	Command, Env, Reason, Covers string
}

// Answer is the person's answer to a question.
type Answer int

// The answers.
const (
	// Stop leaves the question open and stops the turn: the session waits
	// for 'courier approve' or 'courier deny'.
	Stop Answer = iota
	Approve
	ApproveAll // and every later command like it
	Deny
	// Later leaves the question to another terminal, whose answer a
	// serving runner waits for.
	Later
)

// Decision is an answer with the reason given for a denial.
type Decision struct {
	Answer Answer
	Reason string
}

// Decides reports whether d approves or denies.
func (d Decision) Decides() bool {
	return d.Answer == Approve || d.Answer == ApproveAll || d.Answer == Deny
}

// decided is the note answering question q with d, which decides it.
func decided(q *history.Pending, d Decision) decisionNote {
	approved := d.Answer == Approve || d.Answer == ApproveAll
	return decisionNote{Sequence: q.Sequence, Index: q.Index, Approved: approved, All: d.Answer == ApproveAll, Reason: d.Reason}
}

// Yes approves everything (the yes setting).
type Yes struct{}

// Approve implements Approver.
func (Yes) Approve(context.Context, Question) (Decision, error) {
	return Decision{Answer: Approve}, nil
}

// decisionNote is a decision left by a courier process for the one
// holding the session, waiting for it (or a later holder) to record it.
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

// readDecision returns the note left for the pending question, removing
// one for another.
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

func (r *Runner) dropDecision(id string) error {
	if err := os.Remove(r.decisionPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("decision: %w", err)
	}
	return nil
}

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

// decisionPoll is how often a runner looks for what another terminal left.
const decisionPoll = 200 * time.Millisecond
