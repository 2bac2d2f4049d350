package runner

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/workspace"
)

// onHistory runs do on session st's workspace and history.
func (r *Runner) onHistory(st *history.State, do func(*workspace.Workspace, *history.History) error) error {
	ws, err := r.openWorkspace(st)
	if err != nil {
		return err
	}
	defer ws.Close()
	o, p := r.cfg.Snapshots, r.cfg.Paths
	o.Private = []string{p.Root, p.Inbox, p.Outbox, p.Sessions}
	h, err := r.store.Open(st.SessionID, ws, o)
	if err != nil {
		return err
	}
	defer h.Close()
	return do(ws, h)
}

// SnapshotError: a turn cannot be shown or undone.
type SnapshotError struct {
	Session  string
	Sequence int
	Err      error
}

func (e *SnapshotError) Error() string {
	return fmt.Sprintf("session %s, request %d: %v", e.Session, e.Sequence, e.Err)
}

func (e *SnapshotError) Unwrap() error { return e.Err }

// withHistory opens a session (or the latest) with its history; with
// what, under its lock.
func (r *Runner) withHistory(id, what string, do func(st *history.State, h *history.History) error) error {
	st, err := r.resolve(id, true)
	if err != nil {
		return err
	}
	if what != "" {
		lock, err := r.store.Lock(st.SessionID, what)
		if err != nil {
			return err
		}
		defer lock.Unlock()
	}
	return r.onHistory(st, func(_ *workspace.Workspace, h *history.History) error { return do(st, h) })
}

// Diff writes what the turn answering request seq (0: the last) changed.
func (r *Runner) Diff(w io.Writer, id string, seq int) error {
	return r.withHistory(id, "", func(st *history.State, h *history.History) error {
		seqs, err := r.store.Turns(st.SessionID)
		if err != nil {
			return err
		}
		switch {
		case seq == 0 && len(seqs) == 0:
			return &SnapshotError{Session: st.SessionID, Err: errors.New("no reply applied yet")}
		case seq == 0:
			seq = seqs[len(seqs)-1]
		case !slices.Contains(seqs, seq):
			return &SnapshotError{Session: st.SessionID, Sequence: seq, Err: errors.New("no reply was applied to this request")}
		}
		if err := h.Diff(w, seq, 0); err != nil {
			return &SnapshotError{Session: st.SessionID, Sequence: seq, Err: err}
		}
		return nil
	})
}

// GC drops the oldest turns' snapshots of a session beyond its budget.
func (r *Runner) GC(id string) (rep history.GCReport, budget int64, err error) {
	err = r.withHistory(id, "courier gc", func(_ *history.State, h *history.History) (err error) {
		budget = h.Budget()
		rep, err = h.GC(budget)
		return err
	})
	return rep, budget, err
}

// Log lists the turns of a session (the named one, or the latest).
func (r *Runner) Log(id string) (Info, []history.TurnLog, error) {
	st, err := r.resolve(id, true)
	if err != nil {
		return Info{}, nil, err
	}
	turns, err := r.store.Log(st)
	return r.info(st), turns, err
}
