package runner

import (
	"errors"
	"os"
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
	st.Undoing = &history.Undoing{Turn: st.UndoTop}
	if t, err := l.store.ReadTurn(st.SessionID, st.UndoTop); err == nil {
		begin, _ := t.Begun()
		st.Undoing.Below = begin.UndoPrev
	}
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
	if err := l.store.Mark(st.SessionID, u.Turn, history.RecordUndone); err != nil {
		return rep, err
	}
	next := *st
	next.Undoing, next.UndoTop = nil, u.Below
	var w RequestWritten
	if st.Run { // no LLM to tell
		err = s.save(&next)
	} else {
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
		w, err = s.advance(&next, nil)
		rep.Outbox = w.Path
	}
	if err != nil {
		return rep, err
	}
	l.cfg.Reporter.TurnUndone(TurnUndone{Session: st.SessionID, Report: rep})
	if !st.Run {
		l.cfg.Reporter.RequestWritten(w)
	}
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
