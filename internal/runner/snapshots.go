package runner

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"

	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/snapshot"
	"github.com/courier-agent/courier/internal/workspace"
)

// Snapshots say how a session records its workspace so that undo can
// reverse what commands did, not only file commands.
type Snapshots struct {
	// Off keeps only the journal's undo of file commands.
	Off bool
	// Exclude and Include are .gitignore-style patterns left out of, or
	// forced into, the snapshots on top of .gitignore.
	Exclude, Include []string
	// Budget bounds the store of one session; TurnLimit what one turn may
	// read into it.
	Budget, TurnLimit int64
}

// snapshots opens the session's snapshot store on ws, or returns nil when
// snapshots are off or cannot be kept here (outside Linux); the journal's
// undo of file commands remains then.
func (r *Runner) snapshots(st *session.State, ws *workspace.Workspace) *snapshot.Store {
	o := r.cfg.Snapshots
	if o.Off {
		return nil
	}
	p := r.cfg.Paths
	snap, err := snapshot.Open(filepath.Join(r.store.Folder(st.SessionID), "snapshot"), ws, snapshot.Options{
		Exclude: o.Exclude, Include: o.Include, Budget: o.Budget, TurnLimit: o.TurnLimit,
		Private: []string{p.Inbox, p.Outbox, p.Sessions},
	})
	if err != nil {
		if !r.warnedSnapshots {
			r.warnedSnapshots = true
			r.report(Warning{Message: fmt.Sprintf("what commands change cannot be undone here: %v", err),
				Hint: "undo still reverts what file commands changed"})
		}
		return nil
	}
	return snap
}

// SnapshotError: a turn's snapshot cannot be shown or undone.
type SnapshotError struct {
	Session  string
	Sequence int
	Err      error
}

func (e *SnapshotError) Error() string {
	return fmt.Sprintf("session %s, request %d: %v", e.Session, e.Sequence, e.Err)
}

func (e *SnapshotError) Unwrap() error { return e.Err }

// withSnapshots opens a session (the named one, or the most recently
// updated) with its workspace and snapshot store, for reading them or,
// with what naming the holder, under the session's lock for changing
// them: a turn recorded meanwhile would write contents nothing refers to
// yet.
func (r *Runner) withSnapshots(id, what string, do func(st *session.State, snap *snapshot.Store) error) error {
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
	ws, err := r.openWorkspace(st)
	if err != nil {
		return err
	}
	defer ws.Close()
	snap := r.snapshots(st, ws)
	if snap == nil {
		return &SnapshotError{Session: st.SessionID, Err: errors.New("this session keeps no snapshots")}
	}
	defer snap.Close()
	return do(st, snap)
}

// Diff writes the unified diff of what the turn answering request seq (0:
// the last one applied) changed in a session (the named one, or the most
// recently updated); binary and large files, modes and symlinks are
// summarised.
func (r *Runner) Diff(w io.Writer, id string, seq int) error {
	return r.withSnapshots(id, "", func(st *session.State, snap *snapshot.Store) error {
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
		if err := snap.Diff(w, seq, 0); err != nil {
			return &SnapshotError{Session: st.SessionID, Sequence: seq, Err: err}
		}
		return nil
	})
}

// GC drops the oldest turns' snapshots of a session beyond its budget;
// they can no longer be undone.
func (r *Runner) GC(id string) (snapshot.GCReport, int64, error) {
	var rep snapshot.GCReport
	var budget int64
	err := r.withSnapshots(id, "courier gc", func(st *session.State, snap *snapshot.Store) error {
		var err error
		budget = snap.Budget()
		rep, err = snap.GC(budget)
		return err
	})
	return rep, budget, err
}

// undoSnapshot undoes turn seq in the workspace from its snapshot, when it
// has one, and adds what it did to rep. A turn with no snapshot (before
// snapshots were kept, or pruned) is left to the journal's undo.
func undoSnapshot(snap *snapshot.Store, seq int, keeps func(int) bool, rep *UndoReport) error {
	if snap == nil {
		return nil
	}
	sr, err := snap.Undo(seq, keeps)
	if errors.Is(err, snapshot.ErrNoSnapshot) || errors.Is(err, snapshot.ErrPruned) {
		return nil
	}
	if err != nil {
		return err
	}
	rep.Snapshot = true
	rep.Restored = sr.Restored
	rep.Removed = sr.Removed
	rep.Folders = sr.Folders
	for _, k := range sr.Kept {
		if rep.Kept == nil {
			rep.Kept = map[string]string{}
		}
		if k.SavedAs != "" {
			rep.Kept[k.Path] = k.SavedAs
		}
	}
	for _, n := range sr.NotUndone {
		rep.NotUndone = append(rep.NotUndone, fmt.Sprintf("%s (%s)", n.Path, n.Reason))
	}
	return nil
}

// mergeUndo adds to the journal's report of a turn's undo what its
// snapshot put back: the file commands' files in the reply's order, then
// the rest, a removed folder only when nothing in it is named.
func mergeUndo(rep *UndoReport, snap UndoReport) {
	rep.Snapshot = snap.Snapshot
	rep.Folders = snap.Folders
	rep.NotUndone = append(rep.NotUndone, snap.NotUndone...)
	rep.Restored = union(rep.Restored, snap.Restored)
	rep.Removed = union(rep.Removed, snap.Removed)
	parents := map[string]bool{}
	for _, p := range rep.Removed {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			parents[d] = true
		}
	}
	var removed []string
	for _, p := range rep.Removed {
		if !parents[p] {
			removed = append(removed, p)
		}
	}
	rep.Removed = removed
	for p, at := range snap.Kept {
		if rep.Kept == nil {
			rep.Kept = map[string]string{}
		}
		rep.Kept[p] = at
	}
}

// union is a followed by what of b it lacks.
func union(a, b []string) []string {
	seen := map[string]bool{}
	for _, p := range a {
		seen[p] = true
	}
	for _, p := range b {
		if !seen[p] {
			seen[p] = true
			a = append(a, p)
		}
	}
	return a
}

// commandChanges lists what each command of turn seq changed, from its
// snapshot; nil when there is none.
func commandChanges(snap *snapshot.Store, seq int, cmds int) []CommandChange {
	if snap == nil {
		return nil
	}
	tc, err := snap.Changes(seq)
	if err != nil {
		return nil
	}
	var out []CommandChange
	for _, c := range tc.Commands {
		if s := c.Summary(10); s != "" {
			out = append(out, CommandChange{Index: c.Index + 1, Changed: s, Pruned: tc.Pruned})
		}
	}
	return out
}

// CommandChange is what one command of a turn changed, for 'courier log'.
type CommandChange struct {
	// Index counts the reply's commands from 1.
	Index   int    `json:"index"`
	Changed string `json:"changed"`
	// Pruned is set when the turn's snapshot was dropped: it can no
	// longer be undone.
	Pruned bool `json:"pruned,omitempty"`
}
