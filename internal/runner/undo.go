package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/session"
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
	Undone    bool         `json:"undone"`
	Finished  bool         `json:"finished"`
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
		for _, r := range t.Records {
			if r.Kind == session.Result && r.Result != nil && !r.Result.Success() {
				info.Failed++
			}
		}
		info.Files = fileChanges(t)
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
}

// Undo reverts the file changes of the held session's last applied reply
// not yet undone, tells the LLM in a new request, and returns what it did.
func (s *Session) Undo() (UndoReport, error) {
	var rep UndoReport
	l, st := s.r, s.st
	if begin, ok, err := l.store.Unfinished(st); err != nil {
		return rep, err
	} else if ok {
		return rep, &UnfinishedError{Session: st.SessionID, Reply: begin.ReplyFile, Approval: st.Pending != nil}
	}
	t, err := l.lastUndoable(st)
	if err != nil {
		return rep, err
	}
	ws, err := l.openWorkspace(st)
	if err != nil {
		return rep, err
	}
	defer ws.Close()
	rep.Sequence = t.Sequence
	rep.Kept = map[string]string{}
	if err := l.revert(ws, t, &rep); err != nil {
		return rep, err
	}
	tw, err := l.store.OpenTurn(st.SessionID, t.Sequence)
	if err != nil {
		return rep, err
	}
	err = tw.Append(session.Record{Kind: session.Undone})
	tw.Close()
	if err != nil {
		return rep, err
	}
	next := *st
	next.IsComplete = false
	next.Summary = ""
	next.SequenceNumber++
	next.LastResults = []command.Result{}
	next.ReadFileRequests = []session.ReadRequest{}
	next.Notices = []string{undoNotice(rep)}
	next.UpdatedAt = time.Now().UTC()
	p, text, err := l.writeRequest(&next)
	if err != nil {
		return rep, err
	}
	if err := l.store.Save(&next); err != nil {
		return rep, err
	}
	*st = next
	rep.Outbox = p
	l.report(TurnUndone{Session: st.SessionID, Report: rep})
	l.report(RequestWritten{Session: st.SessionID, Sequence: st.SequenceNumber, Path: p, Text: text})
	return rep, nil
}

// lastUndoable finds the newest finished turn with file changes that has
// not been undone.
func (l *Runner) lastUndoable(st *session.State) (*session.Turn, error) {
	seqs, err := l.store.Turns(st.SessionID)
	if err != nil {
		return nil, err
	}
	for i := len(seqs) - 1; i >= 0; i-- {
		seq := seqs[i]
		if seq >= st.SequenceNumber && !st.IsComplete {
			continue
		}
		t, err := l.store.ReadTurn(st.SessionID, seq)
		if err != nil || t.IsUndone() || len(t.Changes()) == 0 {
			continue
		}
		return t, nil
	}
	return nil, &NothingToUndoError{Session: st.SessionID}
}

// revert puts every file the turn changed back as it was before the turn.
func (l *Runner) revert(ws *workspace.Workspace, t *session.Turn, rep *UndoReport) error {
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
	for _, p := range order {
		if err := l.keepIfChanged(ws, t, p, last[p], rep); err != nil {
			return err
		}
		orig := first[p]
		if orig.Before == "" {
			if err := ws.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("undo %s: %w", p, err)
			}
			rep.Removed = append(rep.Removed, p)
			continue
		}
		data, err := t.Blob(orig.Before)
		if err != nil {
			return fmt.Errorf("undo %s: %w", p, err)
		}
		if _, err := ws.WriteFile(p, data); err != nil {
			return fmt.Errorf("undo %s: %w", p, err)
		}
		if orig.BeforeMode != 0 {
			if err := ws.Chmod(p, orig.BeforeMode); err != nil {
				return fmt.Errorf("undo %s: %w", p, err)
			}
		}
		rep.Restored = append(rep.Restored, p)
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

// keepIfChanged saves a file's current content when it differs from what
// the turn left, so undo never destroys work done after the turn.
func (l *Runner) keepIfChanged(ws *workspace.Workspace, t *session.Turn, p string, last *session.Change, rep *UndoReport) error {
	data, err := ws.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("undo %s: %w", p, err)
	}
	if !last.Delete && session.Hash(data) == last.After {
		return nil
	}
	h, err := t.SaveBlob(data)
	if err != nil {
		return err
	}
	rep.Kept[p] = t.Dir + "/blobs/" + h
	return nil
}

func undoNotice(rep UndoReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user undid the file changes of your reply to request %d.", rep.Sequence)
	if len(rep.Restored) > 0 {
		fmt.Fprintf(&b, " Restored to their earlier content: %s.", strings.Join(rep.Restored, ", "))
	}
	if len(rep.Removed) > 0 {
		fmt.Fprintf(&b, " Removed (they did not exist before): %s.", strings.Join(rep.Removed, ", "))
	}
	b.WriteString(" Effects of RUN_COMMAND were not undone. Take the workspace as it is now (READ_FILE what you need) and continue.")
	return b.String()
}
