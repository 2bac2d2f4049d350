package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/history"
)

// Undo takes back the held session's most recent turn not yet undone
// (one that changed nothing included), tells the LLM in a new request,
// and returns what it did. A run (of 'courier ops') has no LLM to tell:
// it stays complete, and no request is written. An undo that an earlier
// run left under way is finished instead, and nothing more: it is the
// undo that was asked for.
//
// Undo is a transaction: the state is saved first with the undo under way,
// then the files are put back (each step can be done again without harm),
// and the state saved with the undo done is the commit point, so a crash
// anywhere makes the next run finish the same undo, exactly once.
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

// finishUndo finishes an undo an earlier run left under way; ok is false
// when there was none. Every run that holds the session calls it before
// doing anything else with the session.
func (s *Session) finishUndo() (rep UndoReport, ok bool, err error) {
	if s.st.Undoing == nil {
		return UndoReport{}, false, nil
	}
	rep, err = s.undo(true)
	return rep, true, err
}

// undo carries out the undo the state says is under way and commits it;
// resumed says an earlier run began it.
func (s *Session) undo(resumed bool) (UndoReport, error) {
	l, st := s.r, s.st
	u := *st.Undoing
	// A crash may have left the request or the state half written.
	if err := l.cleanTemps(st.SessionID); err != nil {
		return UndoReport{Sequence: u.Turn}, err
	}
	ws, err := l.openWorkspace(st)
	if err != nil {
		return UndoReport{Sequence: u.Turn}, err
	}
	defer ws.Close()
	h, err := l.history(st, ws)
	if err != nil {
		return UndoReport{Sequence: u.Turn}, err
	}
	defer h.Close()
	rep, err := h.Undo(u.Turn)
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
	next.Undoing = nil
	next.UndoTop = u.Below
	next.UpdatedAt = time.Now().UTC()
	if st.Run {
		// A run stays what it was, complete: it has no LLM to tell and
		// takes no replies, so no request follows its undo.
		if err := l.store.Save(&next); err != nil {
			return rep, err
		}
		*st = next
		l.report(TurnUndone{Session: st.SessionID, Report: rep})
		return rep, nil
	}
	next.IsComplete = false
	next.Summary = ""
	next.SequenceNumber++
	next.LastResults = []command.Result{}
	next.ReadFileRequests = []history.ReadRequest{}
	next.Notices = []string{rep.Notice()}
	if l.afterUndo(st) {
		// The request was written by an undo: the LLM has not heard of
		// that one yet either, and must hear of every turn undone since
		// its last reply.
		next.Notices = nil
		for _, n := range st.Notices {
			next.Notices = append(next.Notices, strings.TrimSuffix(n, history.UndoTail))
		}
		next.Notices = append(next.Notices, rep.Notice())
	}
	w, err := l.saveWithRequest(&next, false)
	if err != nil {
		return rep, err
	}
	*st = next
	rep.Outbox = w.Path
	l.report(TurnUndone{Session: st.SessionID, Report: rep})
	l.report(w)
	return rep, nil
}

// afterUndo reports whether the session's current request was written by
// an undo: the request before it has no turn.
func (r *Runner) afterUndo(st *history.State) bool {
	t, err := r.store.ReadTurn(st.SessionID, st.SequenceNumber-1)
	if err != nil {
		return true
	}
	_, begun := t.Begun()
	return !begun
}

// UndoHandover is an undo done by the process that held the session.
type UndoHandover struct {
	// Holder is that process ("courier watch").
	Holder  string
	Session string
	// Sequence is the request whose reply it undid; Outbox the request it
	// wrote, "" when it had not written it yet when asked.
	Sequence int
	Outbox   string
}

// Undo takes back the last turn of a session (the named one, or the most
// recently updated). While a 'courier watch' holds the session waiting
// for the next reply in another terminal, the undo is handed to it, as the
// person's words are: it undoes the turn there, writes the new request and
// goes on watching; Undo then says what it did.
func (r *Runner) Undo(id string) (*UndoHandover, error) {
	s, err := r.HoldLatest(id, "courier undo")
	var locked *history.LockedError
	if errors.As(err, &locked) {
		return r.handUndo(locked)
	}
	if err != nil {
		return nil, err
	}
	defer s.Release()
	_, err = s.Undo()
	return nil, err
}

// handUndo leaves an undo for the process holding a session, as 'say'
// leaves words, when that process waits for a reply, and waits a moment
// for it to be done. A holder busy with a turn keeps the session: the
// turn it applies may be the one the person meant.
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
	if !r.heard(id, name) && os.Remove(filepath.Join(r.wordsDir(id), name)) == nil {
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
