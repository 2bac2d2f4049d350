package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/workspace"
)

// Undo takes back the held session's most recent turn not yet undone
// (one that changed nothing included) and tells the LLM in a new request
// (a run of 'courier ops' gets none), or finishes an undo left under way.
// The state saved with the undo under way, then with it done (the commit
// point), makes a crash anywhere finish the same undo exactly once.
func (s *Session) Undo() (UndoReport, error) {
	l, st := s.r, s.st
	if err := l.cleanTemps(st.SessionID); err != nil {
		return UndoReport{}, err
	}
	if rep, ok, err := s.finishUndo(); ok || err != nil {
		return rep, err
	}
	if begin, ok, err := l.store.Unfinished(st); err != nil {
		return UndoReport{}, err
	} else if ok {
		return UndoReport{}, &UnfinishedError{Session: st.SessionID, Reply: begin.ReplyFile, Approval: st.Pending != nil, Run: st.Run}
	}
	if st.UndoTop == 0 {
		return UndoReport{}, &NothingToUndoError{Session: st.SessionID}
	}
	below := 0
	if t, err := l.store.ReadTurn(st.SessionID, st.UndoTop); err == nil {
		begin, _ := t.Begun()
		below = begin.UndoPrev
	}
	st.Undoing = &history.Undoing{Turn: st.UndoTop, Below: below}
	if err := l.store.Save(st); err != nil {
		st.Undoing = nil
		return UndoReport{}, err
	}
	return s.undo(false)
}

// finishUndo finishes an undo an earlier run left under way (ok).
func (s *Session) finishUndo() (rep UndoReport, ok bool, err error) {
	if s.st.Undoing == nil {
		return UndoReport{}, false, nil
	}
	rep, err = s.undo(true)
	return rep, true, err
}

// undo carries out and commits the undo under way.
func (s *Session) undo(resumed bool) (UndoReport, error) {
	l, st := s.r, s.st
	u := *st.Undoing
	rep := UndoReport{Sequence: u.Turn}
	// A crash may have left the request or the state half written.
	if err := l.cleanTemps(st.SessionID); err != nil {
		return rep, err
	}
	err := l.onHistory(st, func(_ *workspace.Workspace, h *history.History) (err error) {
		rep, err = h.Undo(u.Turn)
		return err
	})
	rep.Resumed = resumed
	if err != nil {
		return rep, err
	}
	t, err := l.store.OpenTurn(st.SessionID, u.Turn)
	if err != nil {
		return rep, err
	}
	defer t.Close()
	if !t.Has(history.RecordUndone) {
		if err := t.Append(history.Record{Kind: history.RecordUndone}); err != nil {
			return rep, err
		}
	}
	next := *st
	next.Undoing, next.UndoTop = nil, u.Below
	if st.Run { // no LLM to tell
		if err := s.save(&next); err != nil {
			return rep, err
		}
		l.cfg.Reporter.TurnUndone(TurnUndone{Session: st.SessionID, Report: rep})
		return rep, nil
	}
	next.IsComplete, next.Summary, next.Notices = false, "", nil
	next.SequenceNumber++
	next.LastResults, next.ReadFileRequests = []command.Result{}, []history.ReadRequest{}
	if l.afterUndo(st) {
		// The LLM has not heard of the undo that wrote the request either:
		// it hears of every turn undone since its last reply.
		for _, n := range st.Notices {
			next.Notices = append(next.Notices, strings.TrimSuffix(n, history.UndoTail))
		}
	}
	next.Notices = append(next.Notices, rep.Notice())
	w, err := s.advance(&next, nil)
	if err != nil {
		return rep, err
	}
	rep.Outbox = w.Path
	l.cfg.Reporter.TurnUndone(TurnUndone{Session: st.SessionID, Report: rep})
	l.cfg.Reporter.RequestWritten(w)
	return rep, nil
}

// afterUndo reports whether an undo wrote the current request (the one
// before it has no turn).
func (r *Runner) afterUndo(st *history.State) bool {
	t, err := r.store.ReadTurn(st.SessionID, st.SequenceNumber-1)
	if err != nil {
		return true
	}
	_, begun := t.Begun()
	return !begun
}

// UndoHandover is an undo done by the process holding the session, and
// the request it wrote ("": not yet).
type UndoHandover struct {
	Holder, Session string
	Sequence        int
	Outbox          string
}

// Undo takes back the last turn of a session (or the latest), handed to
// a 'courier watch' waiting for a reply in it, as words are.
func (r *Runner) Undo(id string) (*UndoHandover, error) {
	s, err := r.HoldLatest(id, "courier undo")
	if locked, ok := errors.AsType[*history.LockedError](err); ok {
		return r.handUndo(locked)
	}
	if err != nil {
		return nil, err
	}
	defer s.Release()
	_, err = s.Undo()
	return nil, err
}

// handUndo leaves an undo for the holder waiting for a reply and waits a
// moment for it; a holder busy with a turn (maybe the one meant) keeps it.
func (r *Runner) handUndo(locked *history.LockedError) (*UndoHandover, error) {
	id := locked.Session
	st, err := r.store.Load(id)
	if err != nil {
		return nil, err
	}
	if _, busy, err := r.store.Unfinished(st); err != nil || busy || st.Undoing != nil {
		return nil, locked
	}
	if st.UndoTop == 0 {
		return nil, &NothingToUndoError{Session: id}
	}
	name, err := r.leaveWords(id, words{Undo: st.UndoTop})
	if err != nil {
		return nil, err
	}
	if !r.heard(id, name) && os.Remove(r.wordsPath(id, name)) == nil {
		return nil, locked // withdrawn before the holder took it
	}
	h := &UndoHandover{Holder: holderName(locked), Session: id, Sequence: st.UndoTop}
	for deadline := time.Now().Add(heardWait); time.Now().Before(deadline); time.Sleep(decisionPoll / 2) {
		now, err := r.store.Load(id)
		if err == nil && now.Undoing == nil && now.UndoTop != st.UndoTop && r.afterUndo(now) {
			h.Outbox = r.requestPath(id, now.SequenceNumber)
			break
		}
	}
	return h, nil
}

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
