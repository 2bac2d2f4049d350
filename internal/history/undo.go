package history

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// Report says what undoing a turn did.
type Report struct {
	Sequence  int               // the request whose reply was undone
	Kept      map[string]string // path changed since the turn -> where that later content was set aside
	NotUndone []string          // "path (reason)"
	Commands  bool              // what the turn's commands changed was put back too
	Resumed   bool              // an earlier run had begun the undo
	Outbox    string            // the request that tells the LLM
	// Restored: the paths put back; Removed: those the turn created (a
	// folder only when nothing in it is named); Folders: which are folders.
	Restored, Removed, Folders []string
}

// FoldedRestored lists Restored in at most 30 lines, folder by folder when
// they are many: an undone "rm -rf" puts back thousands.
func (r Report) FoldedRestored() []string { return foldPaths(r.Restored, r.Folders, 30) }

// FoldedRemoved lists Removed as FoldedRestored does.
func (r Report) FoldedRemoved() []string { return foldPaths(r.Removed, r.Folders, 30) }

// Notice tells the LLM what the undo did.
func (r Report) Notice() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user undid the changes of your reply to request %d.", r.Sequence)
	if len(r.Restored) > 0 {
		fmt.Fprintf(&b, " Restored to their earlier content: %s.", strings.Join(r.FoldedRestored(), ", "))
	}
	if len(r.Removed) > 0 {
		fmt.Fprintf(&b, " Removed (they did not exist before): %s.", strings.Join(r.FoldedRemoved(), ", "))
	}
	if n := len(r.NotUndone); n > 30 {
		fmt.Fprintf(&b, " Not undone: %s and %d more.", strings.Join(r.NotUndone[:30], ", "), n-30)
	} else if n > 0 {
		fmt.Fprintf(&b, " Not undone: %s.", strings.Join(r.NotUndone, ", "))
	}
	switch {
	case len(r.Restored)+len(r.Removed)+len(r.NotUndone) == 0:
		b.WriteString(" It had changed nothing in the workspace.")
	case r.Commands:
		b.WriteString(" What your commands changed was undone too.")
	default:
		b.WriteString(" What your commands changed was not undone.")
	}
	return b.String() + UndoTail
}

// UndoTail ends an undo's notice; of several in a row, only the last's.
const UndoTail = " Take the workspace as it is now (read again what you need) and continue."

// Undo puts back every path turn seq changed; run again after a crash, it
// skips what is back. The caller records that the turn was undone.
func (h *History) Undo(seq int) (Report, error) {
	rep := Report{Sequence: seq, Kept: map[string]string{}}
	t, err := h.store.ReadTurn(h.id, seq)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, err
	}
	if t.Has(RecordPruned) {
		return rep, fmt.Errorf("turn %d cannot be undone: %w", seq, ErrPruned)
	}
	keptDir := filepath.Join(h.dir, "kept", fmt.Sprintf("%04d", seq))
	root, err := openRoot(h.ws.Dir())
	if err != nil {
		return rep, err
	}
	r := &restorer{h: h, keptDir: keptDir, ch: dirChain{[]string{""}, []dirFD{root}}, rep: &rep, failed: map[string]bool{}}
	defer r.ch.trim(0)
	r.run(t.Records)
	// What undo wrote must be on disk before the undo is committed.
	if err := syncFS(h.dir, h.ws.Dir()); err != nil {
		return rep, fmt.Errorf("undo: %w", err)
	}
	fs.WalkDir(os.DirFS(keptDir), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
		case atomicfile.IsTemp(d.Name()):
			os.Remove(filepath.Join(keptDir, p)) // a copy a crash cut short
		default:
			rep.Kept[p] = filepath.Join(keptDir, p)
		}
		return nil
	})
	// The commands' changes were put back if each that started has them recorded.
	changed := map[int]bool{}
	for _, rec := range t.Records {
		changed[rec.Index] = changed[rec.Index] || rec.Kind == RecordChanged
	}
	rep.Commands = !slices.ContainsFunc(t.Records, func(rec Record) bool { return rec.Kind == RecordStart && !changed[rec.Index] })
	return rep, nil
}

// restorer carries out one undo. Every write goes through folders opened
// without following symlinks, into a temporary name renamed over the
// path: a path is either as later work left it or as before the turn.
type restorer struct {
	h       *History
	keptDir string
	ch      dirChain
	rep     *Report
	failed  map[string]bool
}

// run puts the turn's paths back: folders are made writable, what must go
// is removed deepest first, what must come back put back in walk order,
// and folders get their modes last, deepest first.
func (r *restorer) run(recs []Record) {
	planned := plan(recs)
	why := reasons(notUndoable(recs, planned))
	var todo []Change
	for _, c := range planned {
		switch {
		case c.Ignored():
			r.fail(c.Path, reasonIgnored)
			continue
		case !c.Undoable():
			r.fail(c.Path, strings.TrimSuffix(reasonNotStored+": "+why[c.Path], ": "))
			continue
		case c.Before != nil && c.Before.Kind == Dir:
			if cur := r.stat(c.Path); cur != nil && cur.Kind == Dir && cur.Mode&0o700 != 0o700 {
				r.chmod(c.Path, cur.Mode|0o700)
			}
		case c.Before != nil:
			// What a crashed undo left under the temporary name.
			if fd, err := r.ch.open(parentOf(c.Path)); err == nil {
				unlinkAt(fd, tempName(c.Path))
			}
		}
		todo = append(todo, c)
	}
	for _, c := range slices.Backward(todo) {
		if cur := r.stat(c.Path); c.Path != "" && cur != nil && (c.Before == nil || cur.Kind != c.Before.Kind) {
			r.remove(&c, cur)
		}
	}
	for _, c := range todo {
		if c.Before != nil && c.Path != "" && !r.failedAbove(c.Path) {
			r.put(&c)
		}
	}
	for _, c := range slices.Backward(todo) {
		if b := c.Before; b != nil && b.Kind == Dir && !r.failed[c.Path] {
			if cur := r.stat(c.Path); cur != nil && cur.Kind == Dir && cur.Mode != b.Mode {
				r.chmod(c.Path, b.Mode)
			}
		}
	}
	removed := map[string]bool{}
	for _, c := range todo {
		if !r.failed[c.Path] && c.Before == nil {
			removed[parentOf(c.Path)] = true
		}
	}
	for _, c := range todo {
		switch {
		case r.failed[c.Path], c.Before == nil && removed[c.Path]:
			continue // failed, or a folder made for what it holds (those are named)
		case c.Before != nil:
			r.rep.Restored = append(r.rep.Restored, c.Path)
		default:
			r.rep.Removed = append(r.rep.Removed, c.Path)
		}
		if cmp.Or(c.Before, c.After).Kind == Dir {
			r.rep.Folders = append(r.rep.Folders, c.Path)
		}
	}
}

func (r *restorer) fail(p, reason string) {
	if !r.failed[p] {
		r.failed[p] = true
		r.rep.NotUndone = append(r.rep.NotUndone, fmt.Sprintf("%s (%s)", display(p), reason))
	}
}

func (r *restorer) failedAbove(p string) bool {
	for q := p; q != ""; q = parentOf(q) {
		if r.failed[q] {
			return true
		}
	}
	return false
}

// stat describes a path as it is now, nil if it is not there (or only
// through a symlink).
func (r *restorer) stat(p string) *Entry {
	e := &Entry{Path: p}
	fd, err := r.ch.open(parentOf(p))
	if err != nil || lstatAt(fd, path.Base(p), e) != nil {
		return nil
	}
	if e.Kind == Symlink {
		e.Target, _ = readlinkAt(fd, path.Base(p))
	}
	return e
}

// remove takes away what stands where the turn found nothing, or another kind.
func (r *restorer) remove(c *Change, cur *Entry) {
	fd, err := r.ch.open(parentOf(c.Path))
	name := path.Base(c.Path)
	switch {
	case err != nil:
		r.fail(c.Path, err.Error())
	case cur.Kind == Dir:
		if err := rmdirAt(fd, name); errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, fs.ErrExist) {
			r.fail(c.Path, "the folder holds files the snapshot does not cover, so it was left in place")
		} else if err != nil {
			r.fail(c.Path, "could not remove the folder: "+err.Error())
		}
	case r.setAside(c, cur):
		if err := unlinkAt(fd, name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.fail(c.Path, "could not remove it: "+err.Error())
		}
	}
}

// put makes a path what it was before the turn.
func (r *restorer) put(c *Change) {
	b := c.Before
	fd, err := r.parent(c.Path)
	if err != nil {
		r.fail(c.Path, err.Error())
		return
	}
	name, cur := path.Base(c.Path), r.stat(c.Path)
	switch b.Kind {
	case Dir:
		if cur == nil {
			if err := mkdirAt(fd, name, 0o700); err != nil {
				r.fail(c.Path, "could not create the folder: "+err.Error())
			}
		}
	case Symlink, File:
		if r.already(c, cur) || !r.setAside(c, cur) {
			return
		}
		tmp := tempName(c.Path)
		if err := r.writeContent(fd, tmp, b); err != nil {
			unlinkAt(fd, tmp)
			r.fail(c.Path, err.Error())
		} else if err := renameAt(fd, tmp, name); err != nil {
			unlinkAt(fd, tmp)
			r.fail(c.Path, "could not put it back: "+err.Error())
		}
	default:
		// A FIFO, or a socket or device whose mode alone changed.
		if b.Kind == FIFO && cur == nil {
			if err := mkfifoAt(fd, name, 0o600); err != nil {
				r.fail(c.Path, "could not create the fifo: "+err.Error())
				return
			}
		}
		r.chmod(c.Path, b.Mode)
	}
}

// already reports whether a file or symlink is as before the turn (a
// file given back its mode), or must be left alone.
func (r *restorer) already(c *Change, cur *Entry) bool {
	b := c.Before
	switch {
	case cur == nil || cur.Kind != b.Kind:
		return false
	case b.Kind == Symlink:
		return cur.Target == b.Target
	}
	h, err := r.hashNow(cur)
	if err != nil {
		r.fail(c.Path, err.Error())
	} else if h == b.Hash && cur.Mode != b.Mode {
		r.chmod(c.Path, b.Mode)
	}
	return err != nil || h == b.Hash
}

// hashNow hashes a file as it is now; "" past the turn limit.
func (r *restorer) hashNow(cur *Entry) (h string, err error) {
	if cur.Size > r.h.opts.TurnLimit {
		return "", nil
	}
	f, err := r.open(cur.Path)
	if err == nil {
		h, _, err = hashOf(io.LimitReader(f, r.h.opts.TurnLimit))
		f.Close()
	}
	if err != nil {
		return "", fmt.Errorf("could not read it: %w", err)
	}
	return h, nil
}

// setAside keeps what stands at a path, when it is not what the turn
// left, before undo replaces it: later work is never destroyed silently.
// It reports false when the path must be left alone.
func (r *restorer) setAside(c *Change, cur *Entry) bool {
	a, dst := c.After, filepath.Join(r.keptDir, filepath.FromSlash(c.Path))
	switch {
	case cur == nil || cur.Kind != File && cur.Kind != Symlink:
		return true
	case cur.Kind == Symlink && a != nil && a.Kind == Symlink && a.Target == cur.Target,
		cur.Kind == File && a != nil && a.Kind == File && cur.sameStat(a):
		return true
	case cur.Kind == Symlink:
	default:
		h, err := r.hashNow(cur)
		switch {
		case err != nil:
			r.fail(c.Path, err.Error())
			return false
		case a != nil && h == a.Hash:
			return true
		case h == "":
			r.fail(c.Path, "it changed since the turn and is too large to set aside, so it was left as it is")
			return false
		}
	}
	err := os.MkdirAll(filepath.Dir(dst), 0o755)
	if err == nil {
		err = r.keep(cur, dst)
	}
	if err != nil {
		r.fail(c.Path, "it changed since the turn and could not be set aside ("+err.Error()+"), so it was left as it is")
	}
	return err == nil
}

// keep copies a workspace file or symlink to dst, durably.
func (r *restorer) keep(cur *Entry, dst string) error {
	if cur.Kind == Symlink {
		os.Remove(dst)
		if err := os.Symlink(cur.Target, dst); err != nil {
			return err
		}
		return atomicfile.SyncDir(filepath.Dir(dst))
	}
	src, err := r.open(cur.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// writeContent makes name the symlink or file b was, content from the store.
func (r *restorer) writeContent(fd dirFD, name string, b *Entry) error {
	if b.Kind == Symlink {
		if err := symlinkAt(b.Target, fd, name); err != nil {
			return fmt.Errorf("could not create the symlink: %w", err)
		}
		return nil
	}
	f, err := createAt(fd, name)
	if err != nil {
		return fmt.Errorf("could not write it: %w", err)
	}
	if err = r.h.obj.copyTo(f, b.Hash); err != nil {
		err = fmt.Errorf("its snapshot is missing: %w", err)
	} else {
		err = fchmod(f, b.Mode)
	}
	return cmp.Or(err, f.Close())
}

// parent opens the folder holding p, creating the missing ones.
func (r *restorer) parent(p string) (dirFD, error) {
	dir := parentOf(p)
	fd, err := r.ch.open(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return fd, err
	}
	if fd, err = r.parent(dir); err != nil {
		return fd, err
	}
	if err := mkdirAt(fd, path.Base(dir), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fd, fmt.Errorf("could not create folder %s: %w", display(dir), err)
	}
	return r.ch.open(dir)
}

func (r *restorer) open(p string) (*os.File, error) {
	fd, err := r.ch.open(parentOf(p))
	if err != nil {
		return nil, err
	}
	return openFileAt(fd, path.Base(p))
}

func (r *restorer) chmod(p string, mode uint32) {
	fd, err := r.ch.open(parentOf(p))
	if err == nil {
		err = chmodAt(fd, path.Base(p), mode)
	}
	if err != nil {
		r.fail(p, "could not set its mode: "+err.Error())
	}
}

// tempName is where undo writes p's content: fixed per path, so a run
// after a crash replaces what the crashed one left.
func tempName(p string) string {
	return fmt.Sprintf("%sundo-%.8x", atomicfile.TempPrefix, sha256.Sum256([]byte(p)))
}
