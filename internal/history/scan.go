package history

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/workspace"
)

const (
	// racyWindow is how close to a scan a file's times must be for its
	// stat data not to prove its content unchanged next time. Linux file
	// systems stamp times from a clock that ticks every few milliseconds,
	// FAT every 2 seconds; covering both costs no more than reading again
	// the files changed in the last 2 seconds.
	racyWindow = 2 * time.Second
	// maxDepth and maxEntries bound a scan against a command that builds
	// an absurdly deep or large tree: what lies beyond is not kept.
	maxDepth   = 256
	maxEntries = 1 << 20
	// smallFile is the largest content read whole into memory; larger
	// ones are read twice (see objects.putFile).
	smallFile = 1 << 20
)

// The reasons a path is left as it is by undo.
const (
	reasonNotStored = "its earlier content was not snapshotted"
	reasonIgnored   = "ignored by .gitignore or the settings, so not snapshotted"
)

// scope decides what a scan keeps: everything but what .gitignore or the
// exclusion setting leaves out, plus what the inclusion setting forces in.
// Rules only decide for paths the index does not hold yet: a path it holds
// stays in while it exists, as in git, so a command that adds "*" to
// .gitignore before deleting everything cannot hide the deletion.
type scope struct {
	gitignore        func(p string, isDir bool) bool
	exclude, include *workspace.Patterns
	// private holds courier's own folders inside the workspace.
	private map[string]bool
}

// walkCtx is what a folder passes down to its contents.
type walkCtx struct {
	// git is set inside the workspace's .git folder, which .gitignore
	// files never leave out.
	git bool
	// included is set below a folder the inclusion setting names.
	included bool
	// ignored is set inside a folder the rules leave out, entered only for
	// paths the index holds or the inclusion setting names there.
	ignored bool
	depth   int
}

// verdict is what the scope says of one path.
type verdict uint8

const (
	inScope verdict = iota
	// boundary paths are left out but seen: their presence and stat data
	// are kept, so a command changing them is reported.
	boundary
	// hidden paths are inside a folder that is a boundary: left out
	// without a trace, but a folder is still walked for what the index
	// holds below it.
	hidden
	// excluded paths are left out by the setting, without a trace, and a
	// folder is never walked: the person wants it out.
	excluded
)

// decide places a path that the previous scan had as prev (nil if it did
// not have it). sticky keeps a boundary a boundary, so that within a turn
// a command cannot pull an ignored folder in by deleting .gitignore.
func (s *scope) decide(p string, isDir bool, prev *Entry, cx walkCtx, sticky bool) verdict {
	forced := cx.included || s.include.Match(p, isDir)
	switch {
	case s.private[p]:
		return excluded
	case prev != nil && !prev.ignored():
		return inScope
	case !forced && s.exclude.Match(p, isDir):
		return excluded
	case forced || cx.git || p == ".git":
		return inScope
	case cx.ignored:
		return hidden
	case sticky && prev != nil, s.gitignore(p, isDir):
		return boundary
	}
	return inScope
}

// child returns the context of folder p's contents.
func (s *scope) child(cx walkCtx, p string, v verdict) walkCtx {
	cx.depth++
	cx.git = cx.git || p == ".git"
	cx.included = cx.included || s.include.Match(p, true)
	cx.ignored = cx.ignored || v != inScope
	return cx
}

// isPrivate reports whether p is in one of courier's own folders.
func (s *scope) isPrivate(p string) bool {
	for q := p; q != ""; q = parentOf(q) {
		if s.private[q] {
			return true
		}
	}
	return false
}

// limits is what one turn may still read and store.
type limits struct {
	mu sync.Mutex
	// turnLeft bounds the content a turn reads.
	turnLeft int64
	// budgetLeft bounds the new baseline content a turn stores: content
	// that protects files no command changed may not push the store past
	// its budget, while what commands wrote is stored regardless and the
	// budget is met again by pruning old turns.
	budgetLeft int64
}

// read takes n bytes from what the turn may read.
func (l *limits) read(n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > l.turnLeft {
		return false
	}
	l.turnLeft -= n
	return true
}

// store takes a content of n bytes from what the store may grow by; with
// n 0 it only asks whether there is room.
func (l *limits) store(n int64, baseline bool) bool {
	if n > 0 {
		n += 41 // its format byte and its index entry
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if baseline && n > l.budgetLeft {
		return false
	}
	l.budgetLeft -= n
	return true
}

// scanner walks the workspace once, comparing with the previous index as
// it goes (both are in walk order); the files whose stat data changed are
// read by one worker per processor meanwhile.
type scanner struct {
	h        *History
	prev     []Entry
	pi       int
	sticky   bool
	baseline bool
	lim      *limits
	racyFrom int64
	out      []Entry
	skipped  []Skipped
	count    int
	jobs     chan job
	mu       sync.Mutex
	results  []readResult
}

type job struct {
	path     string
	f        *os.File
	size     int64
	baseline bool
}

type readResult struct {
	path          string
	hash          string
	stored, racy  bool
	read, written int64
	err           error
	overLimit     bool
}

// scan walks the whole workspace. sticky keeps the previous scan's
// boundaries (within a turn); baseline says the contents read protect
// files no command changed (before a command) rather than what a command
// wrote.
func (h *History) scan(prev []Entry, sticky, baseline bool, lim *limits) ([]Entry, []Skipped, int64, error) {
	root, err := openRoot(h.ws.Dir())
	if err != nil {
		return nil, nil, 0, err
	}
	defer unix.Close(root)
	sc := &scanner{h: h, prev: prev, sticky: sticky, baseline: baseline, lim: lim,
		racyFrom: time.Now().Add(-racyWindow).UnixNano(), jobs: make(chan job, 64), out: make([]Entry, 0, len(prev)+16)}
	var top Entry
	if err := fstat(root, &top); err != nil {
		return nil, nil, 0, fmt.Errorf("scan workspace: %w", err)
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 4) {
		wg.Go(func() {
			for j := range sc.jobs {
				r := h.readContent(j, sc.lim, sc.racyFrom)
				sc.mu.Lock()
				sc.results = append(sc.results, r)
				sc.mu.Unlock()
			}
		})
	}
	sc.out = append(sc.out, top)
	sc.walkDir(root, "", walkCtx{})
	close(sc.jobs)
	wg.Wait()
	var written int64
	for _, r := range sc.results {
		i := sort.Search(len(sc.out), func(i int) bool { return cmpPath(sc.out[i].Path, r.path) >= 0 })
		sc.settle(&sc.out[i], r)
		written += r.written
	}
	sort.Slice(sc.skipped, func(i, j int) bool { return cmpPath(sc.skipped[i].Path, sc.skipped[j].Path) < 0 })
	return sc.out, sc.skipped, written, nil
}

// settle puts what reading a file found into its entry.
func (sc *scanner) settle(e *Entry, r readResult) {
	if reason := sc.h.why(r); reason != "" {
		sc.skipped = append(sc.skipped, Skipped{Path: e.Path, Reason: reason})
	}
	if r.err != nil {
		e.Hash, e.Flags = "", e.Flags&^Stored
		return
	}
	e.Hash = r.hash
	if r.stored {
		e.Flags |= Stored
	}
	if r.racy {
		e.Flags |= racy
	}
}

// why says why a content read was not stored, "" when it was.
func (h *History) why(r readResult) string {
	switch {
	case r.err != nil:
		return "could not be read: " + r.err.Error()
	case r.overLimit:
		return "past the turn's snapshot limit of " + human.ExactBytes(h.opts.TurnLimit)
	case !r.stored:
		return "past the snapshot budget of " + human.ExactBytes(h.opts.Budget)
	}
	return ""
}

// seek moves the cursor in the previous index to p and returns its entry
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

// prevInside reports whether the previous index holds paths inside p (the
// cursor is at p).
func (sc *scanner) prevInside(p string) bool {
	i := sc.pi
	if i < len(sc.prev) && sc.prev[i].Path == p {
		i++
	}
	return i < len(sc.prev) && isBelow(sc.prev[i].Path, p)
}

// keepPrevInside copies the previous entries inside folder p unchanged,
// for a folder that cannot be read: taking its contents as unchanged is
// safer than reporting them deleted and making them again on undo.
func (sc *scanner) keepPrevInside(p string) {
	sc.seek(p)
	for i := sc.pi; i < len(sc.prev) && (sc.prev[i].Path == p || isBelow(sc.prev[i].Path, p)); i++ {
		if sc.prev[i].Path != p {
			sc.out = append(sc.out, sc.prev[i])
		}
	}
}

func (sc *scanner) skip(p, reason string) {
	sc.skipped = append(sc.skipped, Skipped{Path: p, Reason: reason})
}

// walkDir records the contents of folder dir, open as fd.
func (sc *scanner) walkDir(fd int, dir string, cx walkCtx) {
	room := maxEntries - sc.count
	names, more, err := readNames(fd, max(room, 0))
	if err == nil && more {
		err = fmt.Errorf("the workspace holds more than %d paths; the rest is not snapshotted", maxEntries)
	}
	if err != nil {
		sc.skip(dir, "folder could not be read ("+err.Error()+"); its contents were taken as unchanged")
		sc.keepPrevInside(dir)
		return
	}
	sc.count += len(names)
	sort.Strings(names)
	for _, name := range names {
		p := join(dir, name)
		prev := sc.seek(p)
		e := Entry{Path: p}
		if lstatAt(fd, name, &e) != nil {
			continue // gone since the listing
		}
		isDir := e.Kind == Dir
		switch v := sc.h.scope.decide(p, isDir, prev, cx, sc.sticky); v {
		case hidden, boundary:
			pos := len(sc.out)
			e.Flags = Ignored
			sc.out = append(sc.out, e)
			if isDir && (sc.prevInside(p) || sc.h.scope.include.MayMatchInside(p)) {
				sc.enter(fd, name, sc.h.scope.child(cx, p, v))
			}
			switch {
			case len(sc.out) > pos+1:
				sc.out[pos].Flags = 0 // something inside is kept: so is its folder
			case v == hidden:
				sc.out = sc.out[:pos]
			}
		case inScope:
			sc.add(fd, name, e, prev, cx)
		}
	}
}

// add records a path in scope.
func (sc *scanner) add(fd int, name string, e Entry, prev *Entry, cx walkCtx) {
	if prev != nil && prev.ignored() {
		prev = nil
	}
	if e.Mtime >= sc.racyFrom || e.Ctime >= sc.racyFrom {
		e.Flags |= racy
	}
	fresh := prev != nil && prev.Flags&racy == 0 && prev.sameStat(&e)
	switch e.Kind {
	case Dir:
		sc.out = append(sc.out, e)
		if cx.depth+1 >= maxDepth {
			sc.out[len(sc.out)-1].Flags = Ignored
			sc.skip(e.Path, fmt.Sprintf("more than %d folders deep; not snapshotted", maxDepth))
			return
		}
		sc.enter(fd, name, sc.h.scope.child(cx, e.Path, inScope))
	case Symlink:
		if fresh {
			e.Target = prev.Target
		} else {
			e.Target, _ = readlinkAt(fd, name)
		}
		sc.out = append(sc.out, e)
	case File:
		baseline := sc.baseline
		if fresh && prev.Hash != "" {
			e.Hash, e.Flags = prev.Hash, e.Flags|prev.Flags&Stored
			// Known but never stored (it did not fit): stored now if the
			// budget has room.
			if e.stored() || !sc.lim.store(0, true) {
				sc.out = append(sc.out, e)
				return
			}
			baseline = true
		}
		sc.out = append(sc.out, e)
		if !sc.lim.read(e.Size) {
			if e.Hash == "" {
				sc.skip(e.Path, sc.h.why(readResult{overLimit: true}))
			}
			return
		}
		f, err := openFileAt(fd, name)
		if err != nil {
			sc.skip(e.Path, "could not be read: "+err.Error())
			return
		}
		sc.jobs <- job{path: e.Path, f: f, size: e.Size, baseline: baseline}
	default:
		sc.out = append(sc.out, e)
	}
}

// enter walks the folder just recorded. A folder its owner cannot read or
// search (a command ran "chmod 000" on it) is opened all the same: its
// mode is lifted while the scan walks it and put back after, so what is
// inside cannot hide.
func (sc *scanner) enter(fd int, name string, cx walkCtx) {
	d := sc.out[len(sc.out)-1]
	sub, err := openAt(fd, name, dirFlags)
	if errors.Is(err, unix.EACCES) && chmodAt(fd, name, d.Mode|0o700) == nil {
		defer chmodAt(fd, name, d.Mode)
		sub, err = openAt(fd, name, dirFlags)
	}
	if err != nil {
		if !errors.Is(err, unix.ENOENT) {
			sc.skip(d.Path, "folder could not be opened ("+err.Error()+"); its contents were taken as unchanged")
			sc.keepPrevInside(d.Path)
		}
		return
	}
	defer unix.Close(sub)
	sc.walkDir(sub, d.Path, cx)
}

// readContent hashes one file's content and stores it if the limits
// allow. It reads at most the size the walk saw, so a file that keeps
// growing cannot hold the scan, and marks the entry racy if the file
// changed meanwhile, so the next scan reads it again.
func (h *History) readContent(j job, lim *limits, racyFrom int64) (r readResult) {
	defer j.f.Close()
	r.path = j.path
	var before, after Entry
	if r.err = fstat(int(j.f.Fd()), &before); r.err == nil && before.Kind != File {
		r.err = errors.New("not a regular file any more")
	}
	if r.err != nil {
		return r
	}
	if j.size <= smallFile {
		data := make([]byte, j.size)
		n, err := io.ReadFull(j.f, data)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			r.err = err
			return r
		}
		r.read, r.hash = int64(n), Hash(data[:n])
		if r.stored = h.obj.has(r.hash); !r.stored && lim.store(int64(n), j.baseline) {
			r.written, r.err = h.obj.put(r.hash, data[:n])
			r.stored = r.err == nil
		}
	} else if lim.store(j.size, j.baseline) {
		r.read = j.size
		r.hash, r.stored, r.written, r.err = h.obj.putFile(j.f, j.size)
	} else {
		hw := sha256.New()
		r.read, r.err = io.Copy(hw, io.LimitReader(j.f, j.size))
		r.hash = hex.EncodeToString(hw.Sum(nil))
		r.stored = h.obj.has(r.hash)
	}
	if r.err == nil && (fstat(int(j.f.Fd()), &after) != nil || !after.sameStat(&before) || r.read != j.size ||
		after.Mtime >= racyFrom || after.Ctime >= racyFrom) {
		r.racy = true
	}
	return r
}

// refresh brings the index up to date for a file command's paths and the
// folders holding them, without walking the workspace, and returns what
// changed there. The paths are kept whatever .gitignore says (git's "add
// -f"), and whatever the turn's limit says: a file command is about to
// change them, and the engine refuses a change whose earlier content it
// would not keep. An *errNotDir error means a symlink stands on the way:
// the caller scans instead.
func (t *Turn) refresh(paths []string) ([]Change, []Skipped, error) {
	r := t.rec
	set := map[string]bool{}
	for _, p := range paths {
		if c, err := workspace.Clean(p); err == nil && c != "." && !r.h.scope.isPrivate(c) {
			for q := c; q != ""; q = parentOf(q) {
				set[q] = true
			}
		}
	}
	list := make([]string, 0, len(set))
	for p := range set {
		list = append(list, p)
	}
	sort.Slice(list, func(i, j int) bool { return cmpPath(list[i], list[j]) < 0 })
	root, err := openRoot(r.h.ws.Dir())
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(root)
	ch := dirChain{root: root}
	defer ch.close()
	racyFrom := time.Now().Add(-racyWindow).UnixNano()
	var changes []Change
	var skipped []Skipped
	for _, p := range list {
		prev := r.ix.get(p)
		e, err := r.statOne(&ch, p, prev, racyFrom)
		if err != nil {
			return nil, nil, err
		}
		if e != nil && e.Kind == File && e.Hash == "" {
			skipped = append(skipped, Skipped{Path: p, Reason: "could not be read"})
		}
		c := Change{Path: p, After: e}
		if prev != nil {
			b := *prev
			c.Before = &b
		}
		if (prev == nil) != (e == nil) || (e != nil && differ(prev, e)) {
			changes = append(changes, c)
		}
		r.ix.apply([]Change{c})
	}
	return changes, skipped, nil
}

// statOne describes one path as a scan would, storing its content if it
// changed since prev; nil when it does not exist.
func (r *recorder) statOne(ch *dirChain, p string, prev *Entry, racyFrom int64) (*Entry, error) {
	fd, err := ch.open(parentOf(p))
	e := &Entry{Path: p}
	if err == nil {
		err = lstatAt(fd, baseOf(p), e)
	}
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if prev != nil && prev.ignored() {
		prev = nil
	}
	if e.Mtime >= racyFrom || e.Ctime >= racyFrom {
		e.Flags |= racy
	}
	fresh := prev != nil && prev.Flags&racy == 0 && prev.sameStat(e)
	switch {
	case e.Kind == Symlink && fresh:
		e.Target = prev.Target
	case e.Kind == Symlink:
		e.Target, err = readlinkAt(fd, baseOf(p))
	case e.Kind == File && fresh && prev.stored():
		e.Hash, e.Flags = prev.Hash, e.Flags|Stored
	case e.Kind == File:
		var f *os.File
		if f, err = openFileAt(fd, baseOf(p)); err != nil {
			return e, nil
		}
		res := r.h.readContent(job{f: f, size: e.Size}, &limits{turnLeft: e.Size}, racyFrom)
		if res.err == nil {
			e.Hash = res.hash
		}
		if res.stored {
			e.Flags |= Stored
		}
		if res.racy {
			e.Flags |= racy
		}
	}
	return e, err
}
