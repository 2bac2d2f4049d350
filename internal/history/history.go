package history

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/workspace"
)

// Options shape what a session's history keeps of its workspace.
type Options struct {
	// Off keeps what file commands change only (snapshots = false).
	Off bool
	// Exclude and Include are .gitignore-style patterns left out of, or
	// kept in spite of, .gitignore.
	Exclude, Include []string
	// Budget is the disk space the contents are brought back to after each
	// turn by dropping the oldest turns'; TurnLimit caps what one turn
	// reads to keep what commands change.
	Budget, TurnLimit int64
	// Private lists courier's own folders, left out and never touched.
	Private []string
}

// Defaults of the snapshot_budget and snapshot_limit settings.
const (
	DefaultBudget    = 512 << 20
	DefaultTurnLimit = 1 << 30
)

// History is one session's history opened on its workspace. Changing it
// needs the session's lock; reading it does not.
type History struct {
	store Store
	id    string
	dir   string
	ws    *workspace.Workspace
	opts  Options
	scope scope
	obj   *objects
}

// Open opens the history of session id, whose workspace is ws.
func (s Store) Open(id string, ws *workspace.Workspace, opts Options) (*History, error) {
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.TurnLimit <= 0 {
		opts.TurnLimit = DefaultTurnLimit
	}
	exclude, err := workspace.CompilePatterns(opts.Exclude)
	if err != nil {
		return nil, fmt.Errorf("snapshot exclusions: %w", err)
	}
	include, err := workspace.CompilePatterns(opts.Include)
	if err != nil {
		return nil, fmt.Errorf("snapshot inclusions: %w", err)
	}
	dir := s.Folder(id)
	return &History{store: s, id: id, dir: dir, ws: ws, opts: opts,
		scope: scope{gitignore: ws.GitIgnore(), exclude: exclude, include: include,
			private: privatePaths(ws.Dir(), append([]string{s.Dir}, opts.Private...))},
		obj: &objects{dir: filepath.Join(dir, "objects"), bw: bufio.NewWriterSize(nil, 256<<10)}}, nil
}

// privatePaths returns the folders among dirs inside the workspace,
// relative to it.
func privatePaths(ws string, dirs []string) map[string]bool {
	resolved := func(p string) string {
		p, _ = filepath.Abs(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	out := map[string]bool{}
	for _, d := range dirs {
		rel, err := filepath.Rel(resolved(ws), resolved(d))
		if err == nil && rel != "." && filepath.IsLocal(rel) {
			out[filepath.ToSlash(rel)] = true
		}
	}
	return out
}

func (h *History) limits() *limits {
	return &limits{turnLeft: h.opts.TurnLimit, budgetLeft: h.opts.Budget - h.obj.size()}
}

// Close releases the pack being written.
func (h *History) Close() { h.obj.close() }

// Budget is the disk space the contents are kept within.
func (h *History) Budget() int64 { return h.opts.Budget }

func (h *History) indexPath() string { return filepath.Join(h.dir, "index") }

// tidy removes what a crash left half-written (under the session lock).
func (h *History) tidy() error {
	for _, d := range []string{h.dir, h.obj.dir} {
		if err := atomicfile.CleanTemps(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Turn opens the record of turn seq for writing and recording; a turn
// begun before is taken up where it stopped.
func (h *History) Turn(seq int) (*Turn, error) {
	if err := h.tidy(); err != nil {
		return nil, err
	}
	t, err := h.store.OpenTurn(h.id, seq)
	if err != nil {
		return nil, err
	}
	t.h = h
	return t, nil
}

// recording loads the index when the turn first needs it: the saved one,
// with the records of the turns it does not hold replayed onto it.
func (t *Turn) recording() error {
	if t.ix != nil {
		return nil
	}
	ix, err := loadIndex(t.h.indexPath())
	if err != nil {
		return err
	}
	for seq := ix.Turn + 1; seq <= t.Sequence; seq++ {
		recs := t.Records
		if seq < t.Sequence {
			old, err := t.h.store.ReadTurn(t.h.id, seq)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			recs = old.Records
		}
		for _, rec := range recs {
			if rec.Kind == RecordChanged {
				ix.apply(rec.Changes)
			}
		}
	}
	t.ix, t.lim = ix, t.h.limits()
	return nil
}

// look brings the index up to date with the workspace, all of it or the
// given paths (see scanner.only), and returns what changed.
func (t *Turn) look(paths []string, sticky, baseline bool) ([]Change, []Skipped, error) {
	only := onlyPaths(paths)
	entries, skipped, blocked, err := t.h.scan(t.ix.Entries, sticky, baseline, t.lim, only)
	if blocked {
		// A symlinked folder on the way: only a full scan sees where the
		// command's writes land.
		only = nil
		entries, skipped, _, err = t.h.scan(t.ix.Entries, sticky, baseline, t.lim, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	changes := compare(t.ix.Entries, entries)
	t.ix.Entries = entries
	t.scanned = t.scanned || only == nil
	return changes, skipped, nil
}

// Before records what changed at a file command's paths, or with nil
// anywhere, since last seen: the new starting point, not the turn's doing.
func (t *Turn) Before(paths []string) error {
	err := t.recording()
	if err != nil || paths == nil && (t.h.opts.Off || t.scanned) {
		return err
	}
	changes, skipped, err := t.look(paths, false, true)
	if err != nil {
		return err
	}
	if len(changes) > 1000 && len(changes) > len(t.ix.Entries)/4 {
		// Mostly new to the index (a first scan): saving the index costs
		// less than recording it all. It keeps its turn number, so this
		// turn's records are replayed onto it if the turn is taken up.
		if err := t.h.obj.sync(); err != nil {
			return err
		}
		if err := t.ix.save(t.h.indexPath()); err != nil {
			return err
		}
		changes = nil
	}
	// What could not be kept is recorded even when nothing changed: it
	// says why a later change of it cannot be undone.
	if len(changes) == 0 && len(skipped) == 0 {
		return nil
	}
	return t.Add(Record{Kind: RecordChanged, Index: -1, Changes: changes, Skipped: skipped})
}

// After records and returns what command i changed at paths, or with nil
// anywhere (nothing when Off), or what was recorded for i before a crash.
func (t *Turn) After(i int, paths []string) (Changes, error) {
	for k, rec := range t.Records {
		if rec.Kind == RecordChanged && rec.Index == i {
			return changesAt(t.Records, k), nil
		}
	}
	err := t.recording()
	if err != nil || paths == nil && t.h.opts.Off {
		return Changes{}, err
	}
	changes, skipped, err := t.look(paths, true, false)
	if err == nil {
		err = t.Add(Record{Kind: RecordChanged, Index: i, Changes: changes, Skipped: skipped})
	}
	if err != nil {
		return Changes{}, err
	}
	return changesAt(t.Records, len(t.Records)-1), nil
}

// Keep stores content a turn needs to finish after a crash and returns
// its hash; it is durable once the record is synced.
func (t *Turn) Keep(data string) (string, error) {
	h := Hash(data)
	return h, t.h.obj.put(h, strings.NewReader(data), int64(len(data)))
}

// Kept reports whether the content with that hash is kept.
func (t *Turn) Kept(hash string) bool { return t.h.obj.has(hash) }

// Content returns stored content by hash, checked against it.
func (t *Turn) Content(hash string) (string, error) { return t.h.obj.read(hash) }

// Finish saves the index as the next turn's start and brings the contents
// within the budget. It returns the warnings for the person.
func (t *Turn) Finish() ([]string, error) {
	if t.ix == nil {
		return nil, nil
	}
	if err := t.Sync(); err != nil {
		return nil, err
	}
	t.ix.Turn = max(t.ix.Turn, t.Sequence)
	if err := t.ix.save(t.h.indexPath()); err != nil {
		return nil, err
	}
	warnings := []string{partlyUndoable(t.Sequence, notUndoable(t.Records))}
	var err error
	if t.h.obj.size() > t.h.opts.Budget {
		var gc GCReport
		gc, err = t.h.GC(t.h.opts.Budget)
		warnings = append(warnings, gc.Warning(t.h.opts.Budget))
	}
	return slices.DeleteFunc(warnings, func(w string) bool { return w == "" }), err
}

// Refresh records the workspace of a new session, so its first turn need
// not read it.
func (h *History) Refresh() error {
	if h.opts.Off {
		return nil
	}
	if err := h.tidy(); err != nil {
		return err
	}
	ix, err := loadIndex(h.indexPath())
	if err != nil {
		return err
	}
	if seqs, err := h.store.Turns(h.id); err != nil || len(seqs) > 0 && seqs[len(seqs)-1] > ix.Turn {
		return err // a turn is under way: it records what it needs
	}
	if ix.Entries, _, _, err = h.scan(ix.Entries, false, true, h.limits(), nil); err != nil {
		return err
	}
	if err := h.obj.sync(); err != nil {
		return err
	}
	return ix.save(h.indexPath())
}

// Unfinished returns the begin record of the session's current turn when
// it was begun and not committed.
func (h *History) Unfinished(st *State) (Record, bool, error) { return h.store.Unfinished(st) }
