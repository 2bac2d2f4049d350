package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/workspace"
)

// Options shape what is snapshotted and how much is kept.
type Options struct {
	// Exclude lists .gitignore-style patterns never snapshotted, on top of
	// what .gitignore leaves out.
	Exclude []string
	// Include lists patterns snapshotted even where .gitignore leaves them
	// out. A pattern with a slash makes the scan enter an ignored folder
	// to find it; one without matches names in the folders walked anyway.
	Include []string
	// Budget is the size the store is brought back to after each turn by
	// pruning the oldest turns (default 512 MB). The newest turn is never
	// pruned.
	Budget int64
	// TurnLimit caps the content one turn reads into the store (default
	// 1 GB): beyond it, changed files are not snapshotted and the turn is
	// only partly undoable.
	TurnLimit int64
	// Private lists courier's own folders (inbox, outbox, sessions): when
	// the workspace holds them, snapshots leave them out and undo never
	// touches them. The store's own folder is always left out.
	Private []string
}

// Defaults for Options, and of courier's snapshot_budget and
// snapshot_limit settings (the config package takes them from here).
const (
	DefaultBudget    = 512 << 20
	DefaultTurnLimit = 1 << 30
)

// Store is the snapshots of one session: the index of the workspace as
// last scanned, the content store, and per turn the record of what each
// command changed and, once undone, what the undo did. It lives in the
// session's folder and is used under the session lock.
type Store struct {
	dir    string
	ws     *workspace.Workspace
	rootfd int
	opts   Options
	scope  scope
	obj    *objects
	// tidied is set once what a crash left half-written is removed.
	tidied bool
}

// Open opens (creating it if needed) the snapshot store in dir for the
// workspace ws. What a crash left half-written in it is removed by the
// first call that changes it (Turn, Refresh, GC, Undo), under the
// session lock: a reader must not remove a writer's temporary files.
func Open(dir string, ws *workspace.Workspace, opts Options) (*Store, error) {
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
	for _, d := range storeDirs(dir) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("snapshot store: %w", err)
		}
	}
	fd, err := openRoot(ws.Dir())
	if err != nil {
		return nil, err
	}
	return &Store{
		dir:    dir,
		ws:     ws,
		rootfd: fd,
		opts:   opts,
		scope:  scope{exclude: exclude, include: include, private: privatePaths(ws.Dir(), append([]string{dir}, opts.Private...))},
		obj:    &objects{dir: filepath.Join(dir, "objects"), packs: &packs{dir: filepath.Join(dir, "packs")}},
	}, nil
}

func storeDirs(dir string) []string {
	return []string{dir, filepath.Join(dir, "objects"), filepath.Join(dir, "packs"), filepath.Join(dir, "turns")}
}

// tidy removes the temporary files a crash left in the store, once.
func (s *Store) tidy() error {
	if s.tidied {
		return nil
	}
	for _, d := range storeDirs(s.dir) {
		if err := atomicfile.CleanTemps(d); err != nil {
			return err
		}
	}
	s.tidied = true
	return nil
}

// privatePaths returns, relative to the workspace, the folders among dirs
// that lie inside it.
func privatePaths(ws string, dirs []string) map[string]bool {
	out := map[string]bool{}
	base := resolved(ws)
	for _, d := range dirs {
		rel, err := filepath.Rel(base, resolved(d))
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		out[filepath.ToSlash(rel)] = true
	}
	return out
}

func resolved(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// Close releases the workspace folder and the pack being written.
func (s *Store) Close() error {
	s.obj.packs.close()
	return closeFD(s.rootfd)
}

// Budget is the size the store is kept within.
func (s *Store) Budget() int64 { return s.opts.Budget }

func (s *Store) indexPath() string { return filepath.Join(s.dir, "index") }

func (s *Store) turnPath(seq int, ext string) string {
	return filepath.Join(s.dir, "turns", fmt.Sprintf("%04d.%s", seq, ext))
}
