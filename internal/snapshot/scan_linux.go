package snapshot

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// scanner walks the workspace once, comparing with the previous index as
// it goes (both are in walk order), and reads only the files whose stat
// data changed, on worker goroutines.
type scanner struct {
	s        *Store
	scope    scope
	prev     []Entry
	pi       int
	out      []Entry
	sticky   bool
	baseline bool
	lim      *limits
	racyFrom int64
	dents    []byte

	jobs    chan job
	wg      sync.WaitGroup
	mu      sync.Mutex
	results []readResult
	skipped []Skipped
	full    bool
}

// scan walks the whole workspace. sticky keeps the previous scan's
// boundaries (within a turn); baseline says the contents read protect
// files no command changed (before a turn) rather than what a command
// wrote.
func (s *Store) scan(prev []Entry, sticky, baseline bool, lim *limits) (scanResult, error) {
	sc := &scanner{
		s:        s,
		scope:    s.scope,
		prev:     prev,
		out:      make([]Entry, 0, len(prev)+16),
		sticky:   sticky,
		baseline: baseline,
		lim:      lim,
		racyFrom: time.Now().Add(-racyWindow).UnixNano(),
		dents:    make([]byte, 64<<10),
		jobs:     make(chan job, 64),
	}
	sc.scope.gitignore = s.ws.GitIgnore()
	var root Entry
	if err := fstat(s.rootfd, &root); err != nil {
		return scanResult{}, fmt.Errorf("scan workspace: %w", err)
	}
	sc.seek("")
	sc.out = append(sc.out, root)
	workers := min(runtime.GOMAXPROCS(0), 4)
	for range workers {
		sc.wg.Add(1)
		go func() {
			defer sc.wg.Done()
			var x scratch
			for j := range sc.jobs {
				r := sc.s.readContent(j, sc.racyFrom, &x)
				sc.mu.Lock()
				sc.results = append(sc.results, r)
				sc.mu.Unlock()
			}
		}()
	}
	sc.walkDir(s.rootfd, "", walkCtx{})
	close(sc.jobs)
	sc.wg.Wait()
	res := scanResult{entries: sc.out, skipped: sc.skipped}
	for _, r := range sc.results {
		e := &sc.out[r.idx]
		res.read += r.read
		res.written += r.written
		if r.err != nil {
			res.skipped = append(res.skipped, Skipped{Path: e.Path, Reason: "could not be read: " + r.err.Error()})
			e.flags &^= flagHashed | flagStored
			continue
		}
		if r.ok {
			e.Hash = r.hash
			e.flags |= flagHashed | flagStored
		}
		if r.racy {
			e.flags |= flagRacy
		}
	}
	sort.Slice(res.skipped, func(i, j int) bool { return cmpPath(res.skipped[i].Path, res.skipped[j].Path) < 0 })
	return res, nil
}

// seek moves the cursor of the previous index to p and returns its entry
// there, or nil.
func (sc *scanner) seek(p string) *Entry {
	for sc.pi < len(sc.prev) && cmpPath(sc.prev[sc.pi].Path, p) < 0 {
		sc.pi++
	}
	if sc.pi < len(sc.prev) && sc.prev[sc.pi].Path == p {
		return &sc.prev[sc.pi]
	}
	return nil
}

// prevHasInside reports whether the previous index holds paths inside p
// (the cursor is at p).
func (sc *scanner) prevHasInside(p string) bool {
	i := sc.pi
	if i < len(sc.prev) && sc.prev[i].Path == p {
		i++
	}
	return i < len(sc.prev) && isBelow(sc.prev[i].Path, p)
}

// keepPrevInside copies the previous entries inside folder p unchanged,
// for a folder that cannot be read: assuming its contents unchanged is
// safer than reporting them deleted and recreating them on undo.
func (sc *scanner) keepPrevInside(p string) {
	sc.seek(p)
	i := sc.pi
	if i < len(sc.prev) && sc.prev[i].Path == p {
		i++
	}
	for ; i < len(sc.prev) && isBelow(sc.prev[i].Path, p); i++ {
		sc.out = append(sc.out, sc.prev[i])
	}
}

func (sc *scanner) skip(p, reason string) {
	sc.skipped = append(sc.skipped, Skipped{Path: p, Reason: reason})
}

// walkDir records the contents of folder dir, open as fd.
func (sc *scanner) walkDir(fd int, dir string, cx walkCtx) {
	room := maxEntries - len(sc.out)
	if room <= 0 {
		if !sc.full {
			sc.full = true
			sc.skip(dir, fmt.Sprintf("the workspace holds more than %d paths; the rest is not snapshotted", maxEntries))
		}
		sc.keepPrevInside(dir)
		return
	}
	names, truncated, err := readNames(fd, sc.dents, room)
	if err == nil && truncated {
		err = fmt.Errorf("more than %d entries", room)
	}
	if err != nil {
		sc.skip(dir, "folder could not be read ("+err.Error()+"); its contents were taken as unchanged")
		sc.keepPrevInside(dir)
		return
	}
	sort.Strings(names)
	for _, name := range names {
		p := join(dir, name)
		prev := sc.seek(p)
		e := Entry{Path: p}
		if err := lstatAt(fd, name, &e); err != nil {
			continue // gone since the listing
		}
		isDir := e.Kind == Dir
		switch v := sc.scope.decide(p, isDir, prev, cx, sc.sticky); v {
		case excluded:
		case hidden:
			if isDir && sc.scope.enterLeftOut(p, sc.prevHasInside(p)) {
				pos := len(sc.out)
				sc.out = append(sc.out, e)
				sc.enter(fd, name, sc.scope.child(cx, p, v))
				if len(sc.out) == pos+1 {
					sc.out = sc.out[:pos]
				}
			}
		case boundary:
			e.flags = flagIgnored
			pos := len(sc.out)
			sc.out = append(sc.out, e)
			if isDir && sc.scope.enterLeftOut(p, sc.prevHasInside(p)) {
				sc.enter(fd, name, sc.scope.child(cx, p, v))
				if len(sc.out) > pos+1 {
					// Something inside is snapshotted: so is its folder.
					sc.out[pos].flags = 0
				}
			}
		default:
			sc.add(fd, name, e, prev, cx)
		}
	}
}

// add records a path in the snapshot's scope.
func (sc *scanner) add(fd int, name string, e Entry, prev *Entry, cx walkCtx) {
	if prev != nil && prev.Ignored() {
		prev = nil
	}
	racy := e.Mtime >= sc.racyFrom || e.Ctime >= sc.racyFrom
	if racy {
		e.flags |= flagRacy
	}
	fresh := prev != nil && prev.Kind == e.Kind && prev.flags&flagRacy == 0 && prev.sameStat(&e)
	idx := len(sc.out)
	switch e.Kind {
	case Dir:
		sc.out = append(sc.out, e)
		if cx.depth+1 >= maxDepth {
			sc.out[idx].flags = flagIgnored
			sc.skip(e.Path, fmt.Sprintf("more than %d folders deep; not snapshotted", maxDepth))
			return
		}
		sc.enter(fd, name, sc.scope.child(cx, e.Path, inScope))
	case Symlink:
		if fresh {
			e.Target = prev.Target
		} else if t, err := readlinkAt(fd, name); err == nil {
			e.Target = t
		}
		sc.out = append(sc.out, e)
	case File:
		baseline := sc.baseline
		if fresh && prev.Hashed() {
			e.Hash = prev.Hash
			e.flags |= prev.flags & (flagHashed | flagStored)
			if e.Stored() {
				sc.out = append(sc.out, e)
				return
			}
			// Known but never stored (it did not fit): store it now if
			// the budget has room.
			baseline = true
		}
		sc.out = append(sc.out, e)
		if !sc.lim.reserve(e.Size, baseline) {
			if !e.Hashed() {
				sc.skip(e.Path, "over the snapshot limit")
			}
			return
		}
		f, err := openFileAt(fd, name)
		if err != nil {
			sc.skip(e.Path, "could not be read: "+err.Error())
			return
		}
		sc.jobs <- job{idx: idx, f: f, size: e.Size}
	default:
		sc.out = append(sc.out, e)
	}
}

// enter walks a folder of fd.
func (sc *scanner) enter(fd int, name string, cx walkCtx) {
	p := sc.out[len(sc.out)-1].Path
	sub, err := openDirAt(fd, name)
	if err != nil {
		if !errors.Is(err, unix.ENOENT) {
			sc.skip(p, "folder could not be opened ("+err.Error()+"); its contents were taken as unchanged")
			sc.keepPrevInside(p)
		}
		return
	}
	defer unix.Close(sub)
	sc.walkDir(sub, p, cx)
}

// readContent stores one file's content. It reads at most the size the
// walk saw, so a file that keeps growing cannot hold the scan, and marks
// the entry racy if the file changed meanwhile, so the next scan reads it
// again.
func (s *Store) readContent(j job, racyFrom int64, x *scratch) readResult {
	defer j.f.Close()
	r := readResult{idx: j.idx}
	var before Entry
	if err := fstat(int(j.f.Fd()), &before); err != nil {
		r.err = err
		return r
	}
	if before.Kind != File {
		r.err = errors.New("not a regular file any more")
		return r
	}
	src := io.LimitReader(j.f, j.size)
	if j.size <= smallFile {
		if cap(x.data) < int(j.size) {
			x.data = make([]byte, j.size)
		}
		n, err := io.ReadFull(src, x.data[:j.size])
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			r.err = err
			return r
		}
		data := x.data[:n]
		r.hash = sha256.Sum256(data)
		r.read = int64(n)
		r.written, r.err = s.obj.putBytes(r.hash, data, x)
	} else {
		cr := &countingReader{r: src}
		r.hash, r.written, r.err = s.obj.putStream(cr, x)
		r.read = cr.n
	}
	if r.err != nil {
		return r
	}
	r.ok = true
	var after Entry
	if fstat(int(j.f.Fd()), &after) != nil || !after.sameStat(&before) || r.read != j.size ||
		after.Mtime >= racyFrom || after.Ctime >= racyFrom {
		r.racy = true
	}
	return r
}

func closeFD(fd int) error { return unix.Close(fd) }
