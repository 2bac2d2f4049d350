package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// restorer carries out one undo. Every write goes through folder
// descriptors opened without following symlinks, into a temporary name
// renamed over the path, so a path is always either as the turn left it
// (or as later work left it) or as it was before the turn.
type restorer struct {
	s    *Store
	seq  int
	log  *recordFile
	kept map[string]Kept
	ch   dirChain
	// failed holds the paths undo could not put back.
	failed map[string]bool
	rep    *UndoReport
}

// restore puts the planned paths back, adding to kept what it sets
// aside.
func (s *Store) restore(seq int, pl []planned, log *recordFile, kept map[string]Kept, rep *UndoReport) error {
	r := &restorer{s: s, seq: seq, log: log, kept: kept, ch: dirChain{root: s.rootfd}}
	defer r.ch.close()
	return r.run(pl, rep)
}

// run restores the planned paths: folders it must work in are made
// writable, what must go is removed deepest first, what must come back is
// put back in walk order (folders before their contents), and folders get
// their modes last, deepest first, since a read-only folder would refuse
// the writes inside it.
func (r *restorer) run(pl []planned, rep *UndoReport) error {
	r.rep = rep
	r.failed = map[string]bool{}
	var todo []planned
	for _, p := range pl {
		c := Change{Path: p.path, Before: p.before, After: p.after}
		switch {
		case p.ignored:
			rep.NotUndone = append(rep.NotUndone, Skipped{Path: p.path, Reason: reasonIgnored})
		case !c.Undoable():
			rep.NotUndone = append(rep.NotUndone, Skipped{Path: p.path, Reason: reasonNotStored})
		default:
			todo = append(todo, p)
		}
	}
	for _, p := range todo {
		if p.before != nil && p.before.Kind == Dir {
			if cur := r.stat(p.path); cur != nil && cur.Kind == Dir && cur.Mode&0o700 != 0o700 {
				r.chmod(p.path, cur.Mode|0o700)
			}
		}
	}
	for i := len(todo) - 1; i >= 0; i-- {
		p := &todo[i]
		if cur := r.stat(p.path); cur != nil && (p.before == nil || cur.Kind != p.before.Kind) {
			if err := r.remove(p, cur); err != nil {
				return err
			}
		}
	}
	for i := range todo {
		if p := &todo[i]; p.before != nil && !r.failedAbove(p.path) {
			if err := r.put(p); err != nil {
				return err
			}
		}
	}
	for i := len(todo) - 1; i >= 0; i-- {
		p := &todo[i]
		if p.before != nil && p.before.Kind == Dir && !r.failed[p.path] {
			if cur := r.stat(p.path); cur != nil && cur.Kind == Dir && cur.Mode != p.before.Mode {
				r.chmod(p.path, p.before.Mode)
			}
		}
	}
	for _, p := range todo {
		// What the path is about: what was put back, or what went.
		about := p.before
		switch {
		case r.failed[p.path]:
			continue
		case p.before == nil:
			rep.Removed = append(rep.Removed, p.path)
			about = p.after
		default:
			rep.Restored = append(rep.Restored, p.path)
		}
		if about != nil && about.Kind == Dir {
			rep.Folders = append(rep.Folders, p.path)
		}
	}
	return nil
}

func (r *restorer) fail(p, reason string) {
	if !r.failed[p] {
		r.failed[p] = true
		r.rep.NotUndone = append(r.rep.NotUndone, Skipped{Path: p, Reason: reason})
	}
}

// failedAbove reports whether p or a folder holding it could not be put
// back, so nothing is attempted below it.
func (r *restorer) failedAbove(p string) bool {
	for q := p; q != ""; q = parentOf(q) {
		if r.failed[q] {
			return true
		}
	}
	return false
}

// stat describes a path as it is now, nil if it is not there (or not
// reachable without following a symlink).
func (r *restorer) stat(p string) *Entry {
	e := Entry{Path: p}
	if p == "" {
		if fstat(r.s.rootfd, &e) != nil {
			return nil
		}
		return &e
	}
	fd, err := r.ch.open(parentOf(p))
	if err != nil || lstatAt(fd, baseOf(p), &e) != nil {
		return nil
	}
	if e.Kind == Symlink {
		e.Target, _ = readlinkAt(fd, baseOf(p))
	}
	return &e
}

// remove takes away what stands at a path that held nothing, or
// something of another kind, before the turn.
func (r *restorer) remove(p *planned, cur *Entry) error {
	fd, err := r.ch.open(parentOf(p.path))
	if err != nil {
		r.fail(p.path, err.Error())
		return nil
	}
	if cur.Kind == Dir {
		if err := unix.Unlinkat(fd, baseOf(p.path), unix.AT_REMOVEDIR); err != nil {
			reason := "could not remove the folder: " + err.Error()
			if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
				reason = "the folder holds files the snapshot does not cover, so it was left in place"
			}
			r.fail(p.path, reason)
			return nil
		}
		r.ch.forget(p.path)
		return nil
	}
	if ok, err := r.setAside(p, cur); err != nil || !ok {
		return err
	}
	if err := unix.Unlinkat(fd, baseOf(p.path), 0); err != nil && !errors.Is(err, unix.ENOENT) {
		r.fail(p.path, "could not remove it: "+err.Error())
	}
	return nil
}

// put makes a path what it was before the turn.
func (r *restorer) put(p *planned) error {
	b := p.before
	if p.path == "" {
		return nil // the workspace folder: only its mode, set last
	}
	fd, err := r.parent(p.path)
	if err != nil {
		r.fail(p.path, err.Error())
		return nil
	}
	name := baseOf(p.path)
	cur := r.stat(p.path)
	switch b.Kind {
	case Dir:
		if cur == nil {
			if err := unix.Mkdirat(fd, name, 0o700); err != nil {
				r.fail(p.path, "could not create the folder: "+err.Error())
			}
		}
		return nil
	case Symlink:
		if cur != nil && cur.Kind == Symlink && cur.Target == b.Target {
			return nil
		}
		if ok, err := r.setAside(p, cur); err != nil || !ok {
			return err
		}
		tmp := tempName(p.path)
		unix.Unlinkat(fd, tmp, 0)
		if err := unix.Symlinkat(b.Target, fd, tmp); err != nil {
			r.fail(p.path, "could not create the symlink: "+err.Error())
			return nil
		}
		return r.rename(fd, tmp, p.path)
	case FIFO:
		if cur == nil {
			if err := unix.Mkfifoat(fd, name, 0o600); err != nil {
				r.fail(p.path, "could not create the fifo: "+err.Error())
				return nil
			}
		}
		r.chmod(p.path, b.Mode)
		return nil
	case File:
		return r.putFile(p, fd, cur)
	}
	// A socket or device whose mode alone changed.
	r.chmod(p.path, b.Mode)
	return nil
}

// putFile gives a file its earlier content and mode.
func (r *restorer) putFile(p *planned, fd int, cur *Entry) error {
	b := p.before
	if cur != nil && cur.Kind == File {
		same, err := r.sameContent(cur, b, p.after)
		if err != nil {
			r.fail(p.path, err.Error())
			return nil
		}
		if same {
			if cur.Mode != b.Mode {
				r.chmod(p.path, b.Mode)
			}
			return nil
		}
	}
	if ok, err := r.setAside(p, cur); err != nil || !ok {
		return err
	}
	tmp := tempName(p.path)
	unix.Unlinkat(fd, tmp, 0)
	if err := r.writeContent(fd, tmp, b); err != nil {
		unix.Unlinkat(fd, tmp, 0)
		r.fail(p.path, err.Error())
		return nil
	}
	return r.rename(fd, tmp, p.path)
}

// sameContent reports whether the file now holds the content it had
// before the turn: its stat data match what the turn left and that was
// the same content, or its content hashes to it.
func (r *restorer) sameContent(cur, before, after *Entry) (bool, error) {
	if after != nil && after.Kind == File && cur.sameStat(after) && after.Hashed() && before.Hashed() {
		return after.Hash == before.Hash, nil
	}
	h, ok, err := r.hashNow(cur)
	if err != nil || !ok {
		return false, err
	}
	return before.Hashed() && h == before.Hash, nil
}

// hashNow hashes a file as it is now; ok is false for one too large to
// read within the turn limit.
func (r *restorer) hashNow(cur *Entry) (Hash, bool, error) {
	var h Hash
	if cur.Size > r.s.opts.TurnLimit {
		return h, false, nil
	}
	fd, err := r.ch.open(parentOf(cur.Path))
	if err != nil {
		return h, false, err
	}
	f, err := openFileAt(fd, baseOf(cur.Path))
	if err != nil {
		return h, false, fmt.Errorf("could not read it: %w", err)
	}
	defer f.Close()
	hw := sha256.New()
	if _, err := io.Copy(hw, io.LimitReader(f, r.s.opts.TurnLimit)); err != nil {
		return h, false, fmt.Errorf("could not read it: %w", err)
	}
	copy(h[:], hw.Sum(nil))
	return h, true, nil
}

// setAside keeps what stands at a path before undo replaces or removes
// it, when that is not what the turn left there: later work is never
// destroyed silently. ok is false when the path must be left alone.
func (r *restorer) setAside(p *planned, cur *Entry) (bool, error) {
	if cur == nil {
		return true, nil
	}
	if _, done := r.kept[p.path]; done {
		return true, nil
	}
	a := p.after
	switch cur.Kind {
	case Symlink:
		if a != nil && a.Kind == Symlink && a.Target == cur.Target {
			return true, nil
		}
		return true, r.recordKept(Kept{Path: p.path, Target: cur.Target})
	case File:
		if a != nil && a.Kind == File && cur.sameStat(a) {
			return true, nil
		}
		if a != nil && a.Kind == File && a.Hashed() {
			h, ok, err := r.hashNow(cur)
			if err != nil {
				r.fail(p.path, err.Error())
				return false, nil
			}
			if ok && h == a.Hash {
				return true, nil
			}
		}
		if cur.Size > r.s.opts.TurnLimit {
			r.fail(p.path, "it changed since the turn and is too large to set aside, so it was left as it is")
			return false, nil
		}
		saved, err := r.copyAside(p.path)
		if err != nil {
			r.fail(p.path, "it changed since the turn and could not be set aside ("+err.Error()+"), so it was left as it is")
			return false, nil
		}
		return true, r.recordKept(Kept{Path: p.path, SavedAs: saved})
	}
	return true, nil
}

func (r *restorer) recordKept(k Kept) error {
	rec := appendString(appendString(appendString([]byte{undoKept}, k.Path), k.SavedAs), k.Target)
	if err := r.log.append(rec, true); err != nil {
		return err
	}
	r.kept[k.Path] = k
	return nil
}

// copyAside copies a workspace file into the session's kept folder,
// durably, and returns where.
func (r *restorer) copyAside(p string) (string, error) {
	fd, err := r.ch.open(parentOf(p))
	if err != nil {
		return "", err
	}
	src, err := openFileAt(fd, baseOf(p))
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst := filepath.Join(r.s.dir, "kept", fmt.Sprintf("%04d", r.seq), filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), atomicfile.TempPrefix+"kept-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, src)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err == nil {
		err = atomicfile.SyncDir(filepath.Dir(dst))
	}
	return dst, err
}

// writeContent writes an entry's stored content into a new file.
func (r *restorer) writeContent(fd int, name string, b *Entry) error {
	src, err := r.s.obj.open(b.Hash)
	if err != nil {
		return fmt.Errorf("its snapshot is missing: %w", err)
	}
	defer src.Close()
	nfd, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("could not write it: %w", err)
	}
	f := os.NewFile(uintptr(nfd), name)
	_, err = io.Copy(f, src)
	if err == nil {
		err = unix.Fchmod(nfd, b.Mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rename moves a finished temporary file over the path.
func (r *restorer) rename(fd int, tmp, p string) error {
	if err := unix.Renameat(fd, tmp, fd, baseOf(p)); err != nil {
		unix.Unlinkat(fd, tmp, 0)
		r.fail(p, "could not put it back: "+err.Error())
	}
	return nil
}

// parent opens the folder holding p, creating the missing folders on the
// way (a folder that was deleted after the turn is needed to hold p).
func (r *restorer) parent(p string) (int, error) {
	dir := parentOf(p)
	fd, err := r.ch.open(dir)
	if err == nil || !errors.Is(err, unix.ENOENT) {
		return fd, err
	}
	var missing []string
	for d := dir; d != ""; d = parentOf(d) {
		if e := r.stat(d); e != nil {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		pfd, err := r.ch.open(parentOf(missing[i]))
		if err != nil {
			return -1, err
		}
		if err := unix.Mkdirat(pfd, baseOf(missing[i]), 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("could not create folder %s: %w", display(missing[i]), err)
		}
	}
	return r.ch.open(dir)
}

// chmod sets a path's mode without following a symlink.
func (r *restorer) chmod(p string, mode uint32) {
	if p == "" {
		if err := unix.Fchmod(r.s.rootfd, mode); err != nil {
			r.fail(p, "could not set its mode: "+err.Error())
		}
		return
	}
	fd, err := r.ch.open(parentOf(p))
	if err == nil {
		err = chmodAt(fd, baseOf(p), mode)
	}
	if err != nil {
		r.fail(p, "could not set its mode: "+err.Error())
	}
}

// tempName is the temporary name undo writes p's content under: fixed
// per path, so a run after a crash finds and replaces what the crashed
// one left.
func tempName(p string) string {
	sum := sha256.Sum256([]byte(p))
	return atomicfile.TempPrefix + "undo-" + hex.EncodeToString(sum[:8])
}
