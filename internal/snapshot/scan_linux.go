package snapshot

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// scanner walks the workspace once, comparing with the previous index as
// it goes (both are in walk order). Folders are walked by up to one
// walker per processor, each producing its part of the index in walk
// order; the files whose stat data changed are read on worker goroutines
// meanwhile.
type scanner struct {
	s        *Store
	scope    scope
	prev     []Entry
	sticky   bool
	baseline bool
	lim      *limits
	racyFrom int64
	// walkers holds a token per walker goroutine that may still start.
	walkers chan struct{}
	entries atomic.Int64

	jobs    chan job
	wg      sync.WaitGroup
	mu      sync.Mutex
	results []readResult
	full    atomic.Bool
}

// walker walks one subtree: its own cursor in the previous index, its
// own part of the new one.
type walker struct {
	*scanner
	pi int
	// end is where the walker's subtree ends in the previous index.
	end     int
	out     []Entry
	skipped []Skipped
	dents   []byte
	// cuts are where subtrees walked by other walkers go in out.
	cuts []cut
}

// cut is a subtree handed to another walker, whose entries belong at
// position pos of the walker's output.
type cut struct {
	pos  int
	sub  *walker
	done chan struct{}
}

// scan walks the whole workspace. sticky keeps the previous scan's
// boundaries (within a turn); baseline says the contents read protect
// files no command changed (before a turn) rather than what a command
// wrote.
func (s *Store) scan(prev []Entry, sticky, baseline bool, lim *limits) (scanResult, error) {
	procs := min(runtime.GOMAXPROCS(0), 4)
	sc := &scanner{
		s:        s,
		scope:    s.scope,
		prev:     prev,
		sticky:   sticky,
		baseline: baseline,
		lim:      lim,
		racyFrom: time.Now().Add(-racyWindow).UnixNano(),
		walkers:  make(chan struct{}, procs),
		jobs:     make(chan job, 64),
	}
	for range procs - 1 {
		sc.walkers <- struct{}{}
	}
	sc.scope.gitignore = s.ws.GitIgnore()
	var root Entry
	if err := fstat(s.rootfd, &root); err != nil {
		return scanResult{}, fmt.Errorf("scan workspace: %w", err)
	}
	for range procs {
		sc.wg.Add(1)
		go func() {
			defer sc.wg.Done()
			x := sc.s.obj.scratch()
			defer sc.s.obj.release(x)
			for j := range sc.jobs {
				r := sc.s.readContent(j, sc.lim, sc.racyFrom, x)
				sc.mu.Lock()
				sc.results = append(sc.results, r)
				sc.mu.Unlock()
			}
		}()
	}
	w := sc.newWalker("")
	w.out = append(w.out, root)
	w.walkDir(s.rootfd, "", walkCtx{})
	var res scanResult
	res.entries = w.merge(&res.skipped)
	close(sc.jobs)
	sc.wg.Wait()
	for _, r := range sc.results {
		i := sort.Search(len(res.entries), func(i int) bool { return cmpPath(res.entries[i].Path, r.path) >= 0 })
		e := &res.entries[i]
		res.read += r.read
		res.written += r.written
		if r.err != nil {
			res.skipped = append(res.skipped, Skipped{Path: e.Path, Reason: "could not be read: " + r.err.Error()})
			e.flags &^= flagHashed | flagStored
			continue
		}
		if r.hashed {
			e.Hash = r.hash
			e.flags |= flagHashed
		}
		if r.stored {
			e.flags |= flagStored
		} else {
			res.skipped = append(res.skipped, Skipped{Path: e.Path, Reason: "over the snapshot budget"})
		}
		if r.racy {
			e.flags |= flagRacy
		}
	}
	sort.Slice(res.skipped, func(i, j int) bool { return cmpPath(res.skipped[i].Path, res.skipped[j].Path) < 0 })
	return res, nil
}

// newWalker returns a walker of the subtree at p, its cursor at p.
func (sc *scanner) newWalker(p string) *walker {
	w := &walker{scanner: sc, dents: make([]byte, 32<<10)}
	w.pi = sort.Search(len(sc.prev), func(i int) bool { return cmpPath(sc.prev[i].Path, p) >= 0 })
	w.end = len(sc.prev)
	if p != "" {
		w.end = w.pi + sort.Search(len(sc.prev)-w.pi, func(i int) bool {
			q := sc.prev[w.pi+i].Path
			return q != p && !isBelow(q, p)
		})
	}
	w.sizeOut()
	return w
}

// sizeOut gives the walker's output room for what the previous index
// holds in its subtree, and a little more, so that a large tree is
// neither copied over and over as it grows nor held twice.
func (w *walker) sizeOut() {
	n := max(w.end-w.pi, 0)
	w.out = make([]Entry, 0, n+n/16+16)
}

// merge returns the walker's entries with its subtrees' put in place,
// once they are done. The subtrees are moved into the walker's own
// output when it has room, so the whole index is not copied once more.
func (w *walker) merge(skipped *[]Skipped) []Entry {
	*skipped = append(*skipped, w.skipped...)
	if len(w.cuts) == 0 {
		return w.out
	}
	subs := make([][]Entry, len(w.cuts))
	total := len(w.out)
	for i, c := range w.cuts {
		<-c.done
		subs[i] = c.sub.merge(skipped)
		total += len(subs[i])
	}
	if total > cap(w.out) {
		out := make([]Entry, 0, total)
		prev := 0
		for i, c := range w.cuts {
			out = append(out, w.out[prev:c.pos]...)
			out = append(out, subs[i]...)
			prev = c.pos
		}
		return append(out, w.out[prev:]...)
	}
	// Shift each run of the walker's own entries right, last first, and
	// put each subtree in the gap before it.
	src, dst := len(w.out), total
	out := w.out[:total]
	for i := len(w.cuts) - 1; i >= 0; i-- {
		pos := w.cuts[i].pos
		n := src - pos
		copy(out[dst-n:dst], out[pos:src])
		dst -= n
		copy(out[dst-len(subs[i]):dst], subs[i])
		dst -= len(subs[i])
		src = pos
	}
	return out
}

// seek moves the walker's cursor in the previous index to p and returns
// its entry there, or nil.
func (w *walker) seek(p string) *Entry {
	for w.pi < len(w.prev) && cmpPath(w.prev[w.pi].Path, p) < 0 {
		w.pi++
	}
	if w.pi < len(w.prev) && w.prev[w.pi].Path == p {
		return &w.prev[w.pi]
	}
	return nil
}

// prevHasInside reports whether the previous index holds paths inside p
// (the cursor is at p).
func (w *walker) prevHasInside(p string) bool {
	i := w.pi
	if i < len(w.prev) && w.prev[i].Path == p {
		i++
	}
	return i < len(w.prev) && isBelow(w.prev[i].Path, p)
}

// keepPrevInside copies the previous entries inside folder p unchanged,
// for a folder that cannot be read: assuming its contents unchanged is
// safer than reporting them deleted and recreating them on undo.
func (w *walker) keepPrevInside(p string) {
	w.seek(p)
	i := w.pi
	if i < len(w.prev) && w.prev[i].Path == p {
		i++
	}
	for ; i < len(w.prev) && isBelow(w.prev[i].Path, p); i++ {
		w.out = append(w.out, w.prev[i])
	}
}

func (w *walker) skip(p, reason string) {
	w.skipped = append(w.skipped, Skipped{Path: p, Reason: reason})
}

// walkDir records the contents of folder dir, open as fd.
func (w *walker) walkDir(fd int, dir string, cx walkCtx) {
	room := maxEntries - int(w.entries.Load())
	if room <= 0 {
		if !w.full.Swap(true) {
			w.skip(dir, fmt.Sprintf("the workspace holds more than %d paths; the rest is not snapshotted", maxEntries))
		}
		w.keepPrevInside(dir)
		return
	}
	names, truncated, err := readNames(fd, w.dents, room)
	if err == nil && truncated {
		err = fmt.Errorf("more than %d entries", room)
	}
	if err != nil {
		w.skip(dir, "folder could not be read ("+err.Error()+"); its contents were taken as unchanged")
		w.keepPrevInside(dir)
		return
	}
	w.entries.Add(int64(len(names)))
	sort.Strings(names)
	for _, name := range names {
		p := join(dir, name)
		prev := w.seek(p)
		e := Entry{Path: p}
		if err := lstatAt(fd, name, &e); err != nil {
			continue // gone since the listing
		}
		isDir := e.Kind == Dir
		switch v := w.scope.decide(p, isDir, prev, cx, w.sticky); v {
		case excluded:
		case hidden:
			if isDir && w.scope.enterLeftOut(p, w.prevHasInside(p)) {
				pos := len(w.out)
				w.out = append(w.out, e)
				w.enter(fd, name, w.scope.child(cx, p, v), false)
				if len(w.out) == pos+1 {
					w.out = w.out[:pos]
				}
			}
		case boundary:
			e.flags = flagIgnored
			pos := len(w.out)
			w.out = append(w.out, e)
			if isDir && w.scope.enterLeftOut(p, w.prevHasInside(p)) {
				w.enter(fd, name, w.scope.child(cx, p, v), false)
				if len(w.out) > pos+1 {
					// Something inside is snapshotted: so is its folder.
					w.out[pos].flags = 0
				}
			}
		default:
			w.add(fd, name, e, prev, cx)
		}
	}
}

// add records a path in the snapshot's scope.
func (w *walker) add(fd int, name string, e Entry, prev *Entry, cx walkCtx) {
	if prev != nil && prev.Ignored() {
		prev = nil
	}
	racy := e.Mtime >= w.racyFrom || e.Ctime >= w.racyFrom
	if racy {
		e.flags |= flagRacy
	}
	fresh := prev != nil && prev.Kind == e.Kind && prev.flags&flagRacy == 0 && prev.sameStat(&e)
	switch e.Kind {
	case Dir:
		w.out = append(w.out, e)
		if cx.depth+1 >= maxDepth {
			w.out[len(w.out)-1].flags = flagIgnored
			w.skip(e.Path, fmt.Sprintf("more than %d folders deep; not snapshotted", maxDepth))
			return
		}
		w.enter(fd, name, w.scope.child(cx, e.Path, inScope), true)
	case Symlink:
		if fresh {
			e.Target = prev.Target
		} else if t, err := readlinkAt(fd, name); err == nil {
			e.Target = t
		}
		w.out = append(w.out, e)
	case File:
		baseline := w.baseline
		if fresh && prev.Hashed() {
			e.Hash = prev.Hash
			e.flags |= prev.flags & (flagHashed | flagStored)
			// Known but never stored (it did not fit): store it now if
			// the budget has room.
			if e.Stored() || !w.lim.store(0, true) {
				w.out = append(w.out, e)
				return
			}
			baseline = true
		}
		w.out = append(w.out, e)
		if !w.lim.read(e.Size) {
			if !e.Hashed() {
				w.skip(e.Path, "over the snapshot limit")
			}
			return
		}
		f, err := openFileAt(fd, name)
		if err != nil {
			w.skip(e.Path, "could not be read: "+err.Error())
			return
		}
		w.jobs <- job{path: e.Path, f: f, size: e.Size, baseline: baseline}
	default:
		w.out = append(w.out, e)
	}
}

// enter walks the folder just recorded, itself or, when a walker is free
// and the folder may be worth it, on another goroutine.
func (w *walker) enter(fd int, name string, cx walkCtx, split bool) {
	p := w.out[len(w.out)-1].Path
	sub, reset, err := openDirToScan(fd, name, w.out[len(w.out)-1].Mode)
	if err != nil {
		if !errors.Is(err, unix.ENOENT) {
			w.skip(p, "folder could not be opened ("+err.Error()+"); its contents were taken as unchanged")
			w.keepPrevInside(p)
		}
		return
	}
	if split && !cx.ignored && cx.depth <= 3 {
		select {
		case <-w.walkers:
			other := w.newWalker(p)
			pc := cut{pos: len(w.out), sub: other, done: make(chan struct{})}
			w.cuts = append(w.cuts, pc)
			go func() {
				defer close(pc.done)
				defer func() { w.walkers <- struct{}{} }()
				defer reset()
				defer unix.Close(sub)
				other.walkDir(sub, p, cx)
			}()
			w.seekPast(p)
			return
		default:
		}
	}
	defer reset()
	defer unix.Close(sub)
	w.walkDir(sub, p, cx)
}

// openDirToScan opens a folder of fd to list it. A folder its owner
// cannot read or search (a command ran "chmod 000" on it, perhaps after
// emptying it) is opened all the same: its mode is lifted while the scan
// walks it and put back by reset, so what is inside cannot hide.
func openDirToScan(fd int, name string, mode uint32) (sub int, reset func(), err error) {
	sub, err = openDirAt(fd, name)
	if !errors.Is(err, unix.EACCES) {
		return sub, func() {}, err
	}
	if err := chmodAt(fd, name, mode|0o700); err != nil {
		return -1, nil, unix.EACCES
	}
	reset = func() { chmodAt(fd, name, mode) }
	sub, err = openDirAt(fd, name)
	if err != nil {
		reset()
		return -1, nil, err
	}
	return sub, reset, nil
}

// seekPast moves the cursor beyond what the previous index holds inside
// p, which another walker handles.
func (w *walker) seekPast(p string) {
	for w.pi < len(w.prev) && (w.prev[w.pi].Path == p || isBelow(w.prev[w.pi].Path, p)) {
		w.pi++
	}
}

// readContent hashes one file's content and stores it if the limits
// allow. It reads at most the size the walk saw, so a file that keeps
// growing cannot hold the scan, and marks the entry racy if the file
// changed meanwhile, so the next scan reads it again.
func (s *Store) readContent(j job, lim *limits, racyFrom int64, x *scratch) readResult {
	defer j.f.Close()
	r := readResult{path: j.path}
	var before Entry
	if err := fstat(int(j.f.Fd()), &before); err != nil {
		r.err = err
		return r
	}
	if before.Kind != File {
		r.err = errors.New("not a regular file any more")
		return r
	}
	src := &countingReader{r: io.LimitReader(j.f, j.size)}
	switch {
	case j.size <= smallFile:
		if cap(x.data) < int(j.size) {
			x.data = make([]byte, j.size)
		}
		n, err := io.ReadFull(src, x.data[:j.size])
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			r.err = err
			return r
		}
		data := x.data[:n]
		r.hash, r.hashed = sha256.Sum256(data), true
		if s.obj.has(r.hash) {
			r.stored = true
		} else if lim.store(int64(n), j.baseline) {
			r.written, r.err = s.obj.putBytes(r.hash, data, x)
			r.stored = r.err == nil
		}
	case lim.store(j.size, j.baseline):
		r.hash, r.written, r.err = s.obj.putStream(src, x)
		r.hashed, r.stored = r.err == nil, r.err == nil
	default:
		hw := sha256.New()
		if _, r.err = io.Copy(hw, src); r.err == nil {
			copy(r.hash[:], hw.Sum(nil))
			r.hashed, r.stored = true, s.obj.has(r.hash)
		}
	}
	r.read = src.n
	if r.err != nil {
		return r
	}
	var after Entry
	if fstat(int(j.f.Fd()), &after) != nil || !after.sameStat(&before) || r.read != j.size ||
		after.Mtime >= racyFrom || after.Ctime >= racyFrom {
		r.racy = true
	}
	return r
}

func closeFD(fd int) error { return unix.Close(fd) }
