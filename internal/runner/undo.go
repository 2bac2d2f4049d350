package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/snapshot"
	"github.com/courier-agent/courier/internal/workspace"
)

// FileChange is one file a turn touched, for log and undo.
type FileChange struct {
	Path    string `json:"path"`
	Action  string `json:"action"` // created, edited, deleted
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// TurnInfo summarises one applied reply.
type TurnInfo struct {
	Sequence  int          `json:"sequence"`
	Reply     string       `json:"reply"`
	AppliedAt time.Time    `json:"appliedAt"`
	Commands  int          `json:"commands"`
	Failed    int          `json:"failed"`
	Files     []FileChange `json:"files"`
	// ByCommand lists what each command changed, RUN_COMMAND included,
	// when the turn has a snapshot.
	ByCommand []CommandChange `json:"byCommand,omitempty"`
	Undone    bool            `json:"undone"`
	Finished  bool            `json:"finished"`
}

// Log lists the turns of a session (the named one, or the most recently
// updated), oldest first.
func (r *Runner) Log(id string) (Info, []TurnInfo, error) {
	st, err := r.resolve(id, true)
	if err != nil {
		return Info{}, nil, err
	}
	turns, err := r.turns(st)
	return r.info(st), turns, err
}

func (r *Runner) turns(st *session.State) ([]TurnInfo, error) {
	var snap *snapshot.Store
	if ws, err := r.openWorkspace(st); err == nil {
		defer ws.Close()
		if snap = r.snapshots(st, ws); snap != nil {
			defer snap.Close()
		}
	}
	seqs, err := r.store.Turns(st.SessionID)
	if err != nil {
		return nil, err
	}
	var out []TurnInfo
	for _, seq := range seqs {
		t, err := r.store.ReadTurn(st.SessionID, seq)
		if err != nil {
			continue
		}
		begin, ok := t.Begun()
		if !ok {
			continue
		}
		info := TurnInfo{Sequence: seq, Reply: begin.ReplyFile, AppliedAt: begin.At, Commands: len(begin.Commands),
			Undone: t.IsUndone(), Finished: seq < st.SequenceNumber || st.IsComplete}
		for _, rec := range t.Records {
			if rec.Kind == session.RecordResult && rec.Result != nil && !rec.Result.Success() {
				info.Failed++
			}
		}
		info.Files = fileChanges(t)
		info.ByCommand = commandChanges(snap, seq, len(begin.Commands))
		out = append(out, info)
	}
	return out, nil
}

// fileChanges folds a turn's changes into one entry per file.
func fileChanges(t *session.Turn) []FileChange {
	byPath := map[string]*FileChange{}
	var order []string
	for _, r := range t.Changes() {
		ch := r.Change
		fc, ok := byPath[ch.Path]
		if !ok {
			fc = &FileChange{Path: ch.Path, Action: "edited"}
			if ch.Before == "" {
				fc.Action = "created"
			}
			byPath[ch.Path] = fc
			order = append(order, ch.Path)
		}
		if ch.Delete {
			if fc.Action == "created" {
				fc.Action = "created and deleted"
			} else {
				fc.Action = "deleted"
			}
		}
		fc.Added += ch.Done.Added
		fc.Removed += ch.Done.Removed
	}
	out := make([]FileChange, 0, len(order))
	for _, p := range order {
		out = append(out, *byPath[p])
	}
	return out
}

// UndoReport says what an undo did.
type UndoReport struct {
	Sequence int
	Restored []string
	Removed  []string
	// Kept names files whose content had changed since the turn; that
	// content was saved here before the file was restored.
	Kept   map[string]string
	Outbox string
	// Resumed is set when the undo was one an earlier run had begun and
	// not finished.
	Resumed bool
	// Snapshot is set when the turn's snapshot put back what its commands
	// did too; NotUndone says what it could not.
	Snapshot  bool
	NotUndone []string
	// Folders lists which of Restored and Removed are folders.
	Folders []string
}

// undoListed caps the lines a list of restored or removed paths takes on
// the terminal and in the request: an undone "rm -rf" may put back
// thousands of files, shown folder by folder past it.
const undoListed = 30

// FoldedRestored and FoldedRemoved list the restored and removed paths in
// at most undoListed lines, folder by folder when they are many.
func (r UndoReport) FoldedRestored() []string { return r.fold(r.Restored) }

// FoldedRemoved: see FoldedRestored.
func (r UndoReport) FoldedRemoved() []string { return r.fold(r.Removed) }

func (r UndoReport) fold(paths []string) []string {
	folders := map[string]bool{}
	for _, f := range r.Folders {
		folders[f] = true
	}
	return snapshot.FoldPaths(paths, func(p string) bool { return folders[p] }, undoListed)
}

// Undo reverts the file changes of the held session's last applied reply
// not yet undone, tells the LLM in a new request, and returns what it did.
// A run (of 'courier ops') has no LLM to tell: it stays complete, and no
// request is written.
// An undo that an earlier run left under way is finished instead, and
// nothing more: it is the undo that was asked for.
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
	top, err := l.store.UndoTop(st)
	if err != nil {
		return UndoReport{}, err
	}
	if top == 0 {
		return UndoReport{}, &NothingToUndoError{Session: st.SessionID}
	}
	t, err := l.store.ReadTurn(st.SessionID, top)
	if err != nil {
		return UndoReport{}, err
	}
	below, err := l.store.UndoBelow(st.SessionID, t)
	if err != nil {
		return UndoReport{}, err
	}
	st.Undoing = &session.Undoing{Turn: top, Below: below}
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
	rep := UndoReport{Sequence: u.Turn, Resumed: resumed}
	// A crash may have left the request or the state half written.
	if err := l.cleanTemps(st.SessionID); err != nil {
		return rep, err
	}
	t, err := l.store.OpenTurn(st.SessionID, u.Turn)
	if err != nil {
		return rep, err
	}
	defer t.Close()
	ws, err := l.openWorkspace(st)
	if err != nil {
		return rep, err
	}
	defer ws.Close()
	// The snapshot puts back what every command did; the journal then
	// checks the file commands' files (already back, they are left alone).
	snap := l.snapshots(st, ws)
	if snap != nil {
		defer snap.Close()
	}
	var byCommands UndoReport
	begun, _ := t.Begun()
	if err := undoSnapshot(snap, u.Turn, engine.JournalKeeps(begun.Commands), &byCommands); err != nil {
		return rep, err
	}
	if err := revert(ws, t, &rep); err != nil {
		return rep, err
	}
	mergeUndo(&rep, byCommands)
	if !t.IsUndone() {
		if err := t.Append(session.Record{Kind: session.RecordUndone}); err != nil {
			return rep, err
		}
	}
	kept, err := t.Kept()
	if err != nil {
		return rep, err
	}
	for p, at := range kept {
		if rep.Kept == nil {
			rep.Kept = map[string]string{}
		}
		rep.Kept[p] = at
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
	next.ReadFileRequests = []session.ReadRequest{}
	next.Notices = []string{undoNotice(rep)}
	if l.afterUndo(st) {
		// The request was written by an undo: the LLM has not heard of
		// that one yet either, and must hear of every turn undone since
		// its last reply.
		next.Notices = nil
		for _, n := range st.Notices {
			next.Notices = append(next.Notices, strings.TrimSuffix(n, undoTail))
		}
		next.Notices = append(next.Notices, undoNotice(rep))
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

// revert puts every file the turn changed back as it was before the turn,
// durably. Each file is looked at first, so that doing it again after a
// crash changes nothing more: a file already as before is left alone, and
// one that changed since the turn is kept (again) before it is replaced.
func revert(ws *workspace.Workspace, t *session.Turn, rep *UndoReport) error {
	first := map[string]*session.Change{}
	last := map[string]*session.Change{}
	var order []string
	var dirs []string
	for _, r := range t.Changes() {
		ch := r.Change
		if _, ok := first[ch.Path]; !ok {
			first[ch.Path] = ch
			order = append(order, ch.Path)
		}
		last[ch.Path] = ch
		dirs = append(dirs, ch.CreatedDirs...)
	}
	b := ws.NewBatch()
	var batched []string
	for _, p := range order {
		orig := first[p]
		if orig.Before == "" {
			rep.Removed = append(rep.Removed, p)
		} else {
			rep.Restored = append(rep.Restored, p)
		}
		if err := ws.CleanTemps(p); err != nil {
			return fmt.Errorf("undo %s: %w", p, err)
		}
		data, info, err := readIfFile(ws, p)
		if err != nil {
			return fmt.Errorf("undo %s: %w", p, err)
		}
		exists := info != nil
		if !exists && orig.Before == "" {
			continue
		}
		if exists && orig.Before != "" && session.Hash(data) == orig.Before &&
			(orig.BeforeMode == 0 || info.Mode().Perm() == orig.BeforeMode) {
			continue // already as before
		}
		if exists && (last[p].Delete || session.Hash(data) != last[p].After) {
			// Changed since the turn: never destroy later work.
			if _, err := t.Keep(p, data); err != nil {
				return fmt.Errorf("undo %s: %w", p, err)
			}
		}
		if orig.Before == "" {
			b.Remove(p)
		} else {
			data, err := t.Blob(orig.Before)
			if err != nil {
				return fmt.Errorf("undo %s: %w", p, err)
			}
			b.Write(p, data, orig.BeforeMode)
		}
		batched = append(batched, p)
	}
	for i, res := range b.Commit() {
		if res.Err != nil && !errors.Is(res.Err, fs.ErrNotExist) {
			return fmt.Errorf("undo %s: %w", batched[i], res.Err)
		}
	}
	// Deepest folders first, so a chain of created folders goes entirely.
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, d := range dirs {
		if err := ws.RemoveEmptyDir(d); err != nil {
			return fmt.Errorf("undo: remove folder %s: %w", d, err)
		}
	}
	return nil
}

// readIfFile reads a workspace file; a missing one gives no info and no
// error.
func readIfFile(ws *workspace.Workspace, p string) ([]byte, fs.FileInfo, error) {
	info, err := ws.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	data, err := ws.ReadFile(p)
	return data, info, err
}

func undoNotice(rep UndoReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user undid the changes of your reply to request %d.", rep.Sequence)
	if len(rep.Restored) > 0 {
		fmt.Fprintf(&b, " Restored to their earlier content: %s.", strings.Join(rep.FoldedRestored(), ", "))
	}
	if len(rep.Removed) > 0 {
		fmt.Fprintf(&b, " Removed (they did not exist before): %s.", strings.Join(rep.FoldedRemoved(), ", "))
	}
	if len(rep.NotUndone) > 0 {
		fmt.Fprintf(&b, " Not undone: %s.", someOf(rep.NotUndone))
	}
	switch {
	case len(rep.Restored)+len(rep.Removed)+len(rep.NotUndone) == 0:
		b.WriteString(" It had changed nothing in the workspace.")
	case rep.Snapshot:
		b.WriteString(" What your commands changed was undone too.")
	default:
		b.WriteString(" What your commands changed was not undone.")
	}
	b.WriteString(undoTail)
	return b.String()
}

// undoTail ends the notice of an undo; of several undos in a row, only
// the last notice keeps it.
const undoTail = " Take the workspace as it is now (read again what you need) and continue."

// afterUndo reports whether the session's current request was written by
// an undo: the request before it has no turn.
func (r *Runner) afterUndo(st *session.State) bool {
	t, err := r.store.ReadTurn(st.SessionID, st.SequenceNumber-1)
	if err != nil {
		return true
	}
	_, begun := t.Begun()
	return !begun
}

// someOf joins names for the LLM, at most noticeNames of them: an undone
// "rm -rf" may put back thousands, and the request need not list them all.
func someOf(names []string) string {
	const noticeNames = 30
	if len(names) <= noticeNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:noticeNames], ", "), len(names)-noticeNames)
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
	var locked *session.LockedError
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

// undoAskedPath is where an undo waits for the process holding the
// session; it holds the turn the person meant (the undo top when asked).
func (r *Runner) undoAskedPath(id string) string {
	return filepath.Join(r.store.Folder(id), "undo-asked")
}

// handUndo leaves an undo for the process holding a session, when that
// process waits for a reply, and waits a moment for it to be done. A
// holder busy with a turn keeps the session: the turn it applies may be
// the one the person meant, so the undo is refused as before.
func (r *Runner) handUndo(locked *session.LockedError) (*UndoHandover, error) {
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
	p := r.undoAskedPath(id)
	if err := atomicfile.Write(p, []byte(strconv.Itoa(st.UndoTop)), 0o644); err != nil {
		return nil, fmt.Errorf("undo: %w", err)
	}
	h := &UndoHandover{Holder: holderName(locked), Session: id, Sequence: st.UndoTop}
	deadline := time.Now().Add(heardWait)
	for {
		_, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break // taken
		}
		if time.Now().After(deadline) {
			if os.Remove(p) == nil {
				return nil, locked // withdrawn before the holder took it
			}
			break
		}
		time.Sleep(decisionPoll / 2)
	}
	for deadline = time.Now().Add(heardWait); time.Now().Before(deadline); time.Sleep(decisionPoll / 2) {
		now, err := r.store.Load(id)
		if err == nil && now.Undoing == nil && now.UndoTop != st.UndoTop && r.afterUndo(now) {
			h.Outbox = r.requestPath(id, now.SequenceNumber)
			break
		}
	}
	return h, nil
}

// takeUndo does the undo another process left for the held session (see
// handUndo), if any. An undo of a turn that is no longer the last (a
// reply was applied meanwhile) is dropped with a warning.
func (s *Session) takeUndo() error {
	p := s.r.undoAskedPath(s.st.SessionID)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("undo asked: %w", err)
	}
	if err := os.Remove(p); err != nil {
		return nil // withdrawn meanwhile
	}
	if top, _ := strconv.Atoi(string(data)); top != s.st.UndoTop {
		s.r.report(Warning{Message: fmt.Sprintf("the undo asked in another terminal was not done: the reply to request %d was applied since", s.st.UndoTop)})
		return nil
	}
	_, err = s.Undo()
	return err
}

// undoAsked reports whether an undo waits for the held session.
func (r *Runner) undoAsked(id string) bool {
	_, err := os.Stat(r.undoAskedPath(id))
	return err == nil
}
