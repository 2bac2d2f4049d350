package snapshot

import (
	"errors"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/courier-agent/courier/internal/workspace"
)

// refresh brings the index up to date for a file command's paths and the
// folders holding them, without walking the workspace, and returns what
// changed there. The paths are snapshotted whatever .gitignore says, as
// undo of file commands always did (git's "add -f"), and within the turn
// limit only: a file command is about to change them, so their content
// is what undo will need, budget or not. An *errNotDir error means a
// symlink stands on the way: the caller scans instead.
func (t *Turn) refresh(paths []string) ([]Change, []Skipped, error) {
	set := map[string]bool{}
	for _, p := range paths {
		c, err := workspace.Clean(p)
		if err != nil || c == "." || t.s.scope.isPrivate(c) {
			continue // the engine refuses such a path itself
		}
		for q := c; q != ""; q = parentOf(q) {
			set[q] = true
		}
	}
	list := make([]string, 0, len(set))
	for p := range set {
		list = append(list, p)
	}
	sort.Slice(list, func(i, j int) bool { return cmpPath(list[i], list[j]) < 0 })

	ch := dirChain{root: t.s.rootfd}
	defer ch.close()
	x := t.s.obj.scratch()
	defer t.s.obj.release(x)
	racyFrom := time.Now().Add(-racyWindow).UnixNano()
	updates := map[string]*Entry{}
	var changes []Change
	var skipped []Skipped
	for _, p := range list {
		prev := t.ix.get(p)
		e, exists, skip, err := t.s.statOne(&ch, p, prev, t.lim, racyFrom, x)
		if err != nil {
			return nil, nil, err
		}
		if skip != nil {
			skipped = append(skipped, *skip)
		}
		switch {
		case !exists && prev == nil:
		case !exists:
			updates[p] = nil
			b := *prev
			changes = append(changes, Change{Path: p, Before: &b})
		default:
			updates[p] = &e
			if prev == nil || differ(prev, &e) {
				c := Change{Path: p, After: &e}
				if prev != nil {
					b := *prev
					c.Before = &b
				}
				changes = append(changes, c)
			}
		}
	}
	t.ix.apply(updates)
	for i := range changes {
		if changes[i].After != nil {
			a := *changes[i].After
			changes[i].After = &a
		}
	}
	return changes, skipped, nil
}

// statOne describes one path as a scan would, storing its content if it
// changed since prev.
func (s *Store) statOne(ch *dirChain, p string, prev *Entry, lim *limits, racyFrom int64, x *scratch) (e Entry, exists bool, skip *Skipped, err error) {
	fd, err := ch.open(parentOf(p))
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return e, false, nil, nil
		}
		return e, false, nil, err
	}
	e.Path = p
	name := baseOf(p)
	if err := lstatAt(fd, name, &e); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return e, false, nil, nil
		}
		return e, false, nil, err
	}
	if prev != nil && prev.Ignored() {
		prev = nil
	}
	if e.Mtime >= racyFrom || e.Ctime >= racyFrom {
		e.flags |= flagRacy
	}
	fresh := prev != nil && prev.Kind == e.Kind && prev.flags&flagRacy == 0 && prev.sameStat(&e)
	switch e.Kind {
	case Symlink:
		if fresh {
			e.Target = prev.Target
		} else if e.Target, err = readlinkAt(fd, name); err != nil {
			return e, false, nil, err
		}
	case File:
		if fresh && prev.Stored() {
			e.Hash, e.flags = prev.Hash, e.flags|prev.flags&(flagHashed|flagStored)
			return e, true, nil, nil
		}
		if !lim.read(e.Size) {
			return e, true, &Skipped{Path: p, Reason: "over the snapshot limit"}, nil
		}
		f, err := openFileAt(fd, name)
		if err != nil {
			return e, true, &Skipped{Path: p, Reason: "could not be read: " + err.Error()}, nil
		}
		r := s.readContent(job{f: f, size: e.Size}, lim, racyFrom, x)
		if r.err != nil {
			return e, true, &Skipped{Path: p, Reason: "could not be read: " + r.err.Error()}, nil
		}
		e.Hash = r.hash
		e.flags |= flagHashed
		if r.stored {
			e.flags |= flagStored
		} else {
			skip = &Skipped{Path: p, Reason: "over the snapshot budget"}
		}
		if r.racy {
			e.flags |= flagRacy
		}
	}
	return e, true, skip, nil
}
