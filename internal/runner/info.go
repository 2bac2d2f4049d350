package runner

import (
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/history"
)

// The states a session can be in, as status shows them to programs.
const (
	StateWaiting          = "waiting"           // for a reply to its request
	StateAwaitingApproval = "awaiting_approval" // for the person's decision on a command
	StateApplying         = "applying"          // a reply's turn is unfinished
	StateComplete         = "complete"
	StateUndoing          = "undoing" // an undo was interrupted; the next run finishes it
)

// Info is a session as status and sessions show it.
type Info struct {
	ID        string    `json:"id"`
	Task      string    `json:"task"`
	Sequence  int       `json:"sequence"`
	Complete  bool      `json:"complete"`
	State     string    `json:"state"`
	UpdatedAt time.Time `json:"updatedAt"`
	CreatedAt time.Time `json:"createdAt"`
	Workspace string    `json:"workspace"`
	Run       bool      `json:"run,omitempty"`
	Protocol  string    `json:"protocol,omitempty"`
	// Approved are the rules the person approved "all like it" for.
	Approved []string `json:"approvedRules,omitempty"`
	// Request waits for a reply; Unfinished names the reply whose turn was
	// left unfinished; PendingCommand waits on approval, and Operation is
	// its id in the ops protocol (set by 'courier status').
	Request        string           `json:"outbox,omitempty"`
	Pending        *history.Pending `json:"pending,omitempty"`
	Summary        string           `json:"summary,omitempty"`
	Unfinished     string           `json:"unfinished,omitempty"`
	Holder         *history.Holder  `json:"holder,omitempty"`
	PendingCommand *command.Command `json:"-"`
	Operation      string           `json:"operationId,omitempty"`
}

func (r *Runner) info(st *history.State) Info {
	i := Info{ID: st.SessionID, Task: st.Task, Sequence: st.SequenceNumber, Complete: st.IsComplete,
		UpdatedAt: st.UpdatedAt, CreatedAt: st.CreatedAt, Workspace: st.Workspace, Pending: st.Pending, Summary: st.Summary,
		Run: st.Run, Protocol: st.Protocol, Approved: st.ApprovedRules}
	switch {
	case st.Undoing != nil:
		i.State = StateUndoing
	case st.IsComplete:
		i.State = StateComplete
	case st.Pending != nil:
		i.State = StateAwaitingApproval
	default:
		i.State = StateWaiting
	}
	if !st.IsComplete && !st.Run {
		i.Request = r.requestPath(st.SessionID, st.SequenceNumber)
	}
	if begin, ok, _ := r.store.Unfinished(st); ok {
		i.Unfinished = begin.ReplyFile
		if st.Pending == nil {
			i.State = StateApplying
		} else if st.Pending.Index < len(begin.Commands) {
			// Only the command waiting: a listing reads no other body.
			if c, err := begin.Command(st.Pending.Index); err == nil {
				i.PendingCommand = &c
			}
		}
	}
	if h, held := r.store.Holder(st.SessionID); held {
		i.Holder = &h
	}
	return i
}

// Status describes a session: the named one, or the most recently updated.
func (r *Runner) Status(id string) (Info, error) {
	st, err := r.resolve(id, true)
	if err != nil {
		return Info{}, err
	}
	return r.info(st), nil
}

// Sessions describes every session, latest first, with the errors of
// session files that do not load.
func (r *Runner) Sessions() ([]Info, []error) {
	all, errs := r.store.List()
	out := make([]Info, 0, len(all))
	for _, st := range all {
		out = append(out, r.info(st))
	}
	return out, errs
}

// cleanTemps removes what a crash left while writing the session's own
// requests and state.
func (r *Runner) cleanTemps(id string) error {
	if err := atomicfile.CleanTempsFor(r.cfg.Paths.Outbox, id+"_"); err != nil {
		return err
	}
	return atomicfile.CleanTempsFor(r.cfg.Paths.Sessions, id+".")
}
