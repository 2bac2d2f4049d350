package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"syscall"
	"time"

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/workspace"
)

const (
	// racyWindow: times this close to a scan do not prove a file unchanged
	// next time (FAT's clock ticks every 2 seconds).
	racyWindow = 2 * time.Second
	// maxDepth and maxEntries bound a scan of an absurd tree.
	maxDepth   = 256
	maxEntries = 1 << 20
	smallFile  = 1 << 20 // read once, into memory, to be hashed and stored
)

// The reasons undo leaves a path as it is.
const (
	reasonNotStored = "its earlier content was not snapshotted"
	reasonIgnored   = "ignored by .gitignore or the settings, so not snapshotted"
)

// scope decides what a scan keeps: all but what .gitignore or the
// exclusion setting leaves out, plus what the inclusion setting forces
// in. Rules decide only for paths the index lacks: as in git, a path it
// holds stays in, so adding "*" to .gitignore cannot hide a deletion.
type scope struct {
	gitignore        func(p string, isDir bool) bool
	exclude, include *workspace.Patterns
	private          map[string]bool // courier's own folders
}

// walkCtx is what a folder passes down to its contents: inside .git
// (which .gitignore never leaves out), below an included folder, inside
// an ignored one (entered only for what the index or inclusions name).
type walkCtx struct {
	git, included, ignored bool
	depth                  int
}

type verdict uint8

const (
	inScope  verdict = iota
	boundary         // left out, but its stat data kept, so changes are reported
	hidden           // inside a boundary, left out without a trace (a folder is still walked for what the index holds below it)
	excluded         // left out by the setting, never walked
)

// decide places a path the previous scan had as prev (or nil). sticky
// keeps a boundary a boundary within a turn (deleting .gitignore pulls
// nothing in); forced is a file command's file, in as "git add -f" does.
func (s *scope) decide(p string, isDir bool, prev *Entry, cx walkCtx, sticky, forced bool) verdict {
	forced = forced || cx.included || s.include.Match(p, isDir)
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

// limits is what one turn may still read, and store of content no command
// changed (what commands wrote is stored regardless; old turns are pruned).
type limits struct{ turnLeft, budgetLeft int64 }

// scanner walks the workspace once, comparing with the previous index as
// it goes (both in walk order).
type scanner struct {
	h        *History
	prev     []Entry
	pi       int
	sticky   bool
	baseline bool
	lim      *limits
	// only, when set, limits the walk to file commands' files (2) and the
	// folders above them (1): the rest is taken from prev as it was.
	only     map[string]uint8
	blocked  bool // something not a folder stands above one of them
	racyFrom int64
	out      []Entry
	skipped  []Skipped
	count    int
}

// scan walks the workspace. sticky keeps the previous boundaries; baseline:
// no command's doing; blocked: a non-folder stands where only has a folder.
func (h *History) scan(prev []Entry, sticky, baseline bool, lim *limits, only map[string]uint8) (entries []Entry, skipped []Skipped, blocked bool, err error) {
	root, err := openRoot(h.ws.Dir())
	if err != nil {
		return nil, nil, false, err
	}
	defer closeFD(root)
	sc := &scanner{h: h, prev: prev, sticky: sticky, baseline: baseline, lim: lim, only: only,
		racyFrom: time.Now().Add(-racyWindow).UnixNano(), out: make([]Entry, 1, len(prev)+16)}
	if err := lstatAt(root, ".", &sc.out[0]); err != nil {
		return nil, nil, false, fmt.Errorf("scan workspace: %w", err)
	}
	if len(prev) > 0 && prev[0].Path == "" {
		sc.pi = 1
	}
	sc.walkDir(root, "", walkCtx{})
	for ; sc.only != nil && sc.pi < len(prev); sc.pi++ {
		if sc.only[prev[sc.pi].Path] == 0 {
			sc.out = append(sc.out, prev[sc.pi]) // the rest of a limited walk
		}
	}
	return sc.out, sc.skipped, sc.blocked, nil
}

// seek moves the cursor in the previous index to p, returning its entry.
func (sc *scanner) seek(p string) *Entry {
	for ; sc.pi < len(sc.prev) && cmpPath(sc.prev[sc.pi].Path, p) < 0; sc.pi++ {
		if q := sc.prev[sc.pi]; sc.only != nil && sc.only[q.Path] == 0 {
			sc.out = append(sc.out, q) // outside a limited walk: as it was
		}
	}
	if sc.pi < len(sc.prev) && sc.prev[sc.pi].Path == p {
		return &sc.prev[sc.pi]
	}
	return nil
}

// keepPrev copies the previous entries of p (with self) and inside it:
// for a path the walk leaves out, or inside an unreadable folder, where
// unchanged is safer than deleted (and made again by undo).
func (sc *scanner) keepPrev(p string, self bool) {
	sc.seek(p)
	for ; sc.pi < len(sc.prev) && (sc.prev[sc.pi].Path == p || isBelow(sc.prev[sc.pi].Path, p)); sc.pi++ {
		if self || sc.prev[sc.pi].Path != p {
			sc.out = append(sc.out, sc.prev[sc.pi])
		}
	}
}

func (sc *scanner) skip(p, reason string) {
	sc.skipped = append(sc.skipped, Skipped{Path: p, Reason: reason})
}

func (sc *scanner) walkDir(fd dirFD, dir string, cx walkCtx) {
	room := max(maxEntries-sc.count, 0)
	var names []string
	f, err := dirFile(fd)
	if err == nil {
		names, err = f.Readdirnames(room + 1)
		f.Close()
	}
	if errors.Is(err, io.EOF) {
		err = nil // empty
	}
	if len(names) > room {
		err = fmt.Errorf("the workspace holds more than %d paths; the rest is not snapshotted", maxEntries)
	}
	if err != nil {
		sc.skip(dir, "folder could not be read ("+err.Error()+"); its contents were taken as unchanged")
		sc.keepPrev(dir, false)
		return
	}
	sc.count += len(names)
	slices.Sort(names)
	for _, name := range names {
		p := path.Join(dir, name)
		prev := sc.seek(p)
		if sc.only != nil && sc.only[p] == 0 {
			sc.keepPrev(p, true)
			continue
		}
		e := Entry{Path: p}
		if lstatAt(fd, name, &e) != nil {
			continue // gone since the listing
		}
		isDir := e.Kind == Dir
		sc.blocked = sc.blocked || sc.only[p] == 1 && !isDir
		switch v := sc.h.scope.decide(p, isDir, prev, cx, sc.sticky, sc.only[p] == 2); v {
		case hidden, boundary:
			pos := len(sc.out)
			e.Flags = Ignored
			sc.out = append(sc.out, e)
			// Does the previous index hold paths inside it (past p itself)?
			inside := slices.ContainsFunc(sc.prev[sc.pi:min(sc.pi+2, len(sc.prev))], func(q Entry) bool { return isBelow(q.Path, p) })
			if isDir && (inside || sc.h.scope.include.MayMatchInside(p) || sc.only[p] == 1) {
				sc.enter(fd, name, cx, v)
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
func (sc *scanner) add(fd dirFD, name string, e Entry, prev *Entry, cx walkCtx) {
	if e.Mtime >= sc.racyFrom || e.Ctime >= sc.racyFrom {
		e.Flags |= racy
	}
	fresh := prev != nil && prev.Flags&(racy|Ignored) == 0 && prev.sameStat(&e)
	switch {
	case e.Kind == Symlink && fresh:
		e.Target = prev.Target
	case e.Kind == Symlink:
		e.Target, _ = readlinkAt(fd, name)
	case e.Kind == File && fresh:
		e.Hash, e.Flags = prev.Hash, e.Flags|prev.Flags&Stored
	}
	sc.out = append(sc.out, e)
	switch {
	case e.Kind == Dir && cx.depth+1 >= maxDepth:
		sc.out[len(sc.out)-1].Flags = Ignored
		sc.skip(e.Path, fmt.Sprintf("more than %d folders deep; not snapshotted", maxDepth))
	case e.Kind == Dir:
		sc.enter(fd, name, cx, inScope)
	case e.Kind == File:
		// A file command's file is kept whatever the limits say.
		forced := sc.only[e.Path] == 2
		baseline := sc.baseline && !forced
		if e.Hash != "" {
			// Known but never stored: stored now if there is room.
			if e.stored() || !forced && sc.lim.budgetLeft < 0 {
				return
			}
			baseline = !forced
		}
		if !forced && e.Size > sc.lim.turnLeft {
			if e.Hash == "" {
				sc.skip(e.Path, "past the turn's snapshot limit of "+human.ExactBytes(sc.h.opts.TurnLimit))
			}
			return
		} else if !forced {
			sc.lim.turnLeft -= e.Size
		}
		if err := sc.read(fd, name, &sc.out[len(sc.out)-1], baseline); err != nil {
			sc.skip(e.Path, "could not be read: "+err.Error())
		}
	}
}

// enter walks the folder just recorded (verdict v); one of mode 000 gets
// its mode lifted while it is walked, so what is inside cannot hide.
func (sc *scanner) enter(fd dirFD, name string, cx walkCtx, v verdict) {
	d := sc.out[len(sc.out)-1]
	cx = walkCtx{git: cx.git || d.Path == ".git", included: cx.included || sc.h.scope.include.Match(d.Path, true),
		ignored: cx.ignored || v != inScope, depth: cx.depth + 1}
	sub, err := openDir(fd, name)
	if errors.Is(err, fs.ErrPermission) && chmodAt(fd, name, d.Mode|0o700) == nil {
		defer chmodAt(fd, name, d.Mode)
		sub, err = openDir(fd, name)
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			sc.skip(d.Path, "folder could not be opened ("+err.Error()+"); its contents were taken as unchanged")
			sc.keepPrev(d.Path, false)
		}
		return
	}
	defer closeFD(sub)
	sc.walkDir(sub, d.Path, cx)
}

// read hashes and stores a file as the limits allow, at most the size the
// walk saw (a growing file cannot hold the scan); racy if it changed.
func (sc *scanner) read(fd dirFD, name string, e *Entry, baseline bool) error {
	e.Hash, e.Flags = "", e.Flags&^Stored
	f, err := openFileAt(fd, name)
	if err != nil {
		return err
	}
	defer f.Close()
	var before, after Entry
	if err := fileStat(f, &before); err != nil {
		return err
	}
	if before.Kind != File {
		return errors.New("not a regular file any more")
	}
	var src io.ReaderAt = f
	var r io.Reader = io.NewSectionReader(f, 0, e.Size)
	if e.Size <= smallFile {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		br := bytes.NewReader(data)
		src, r = br, br
	}
	h, n, err := hashOf(r)
	if err != nil {
		return err
	}
	cost := n
	if n > 0 {
		cost += 41 // its format byte and its index entry
	}
	if !sc.h.obj.has(h) && (!baseline || cost <= sc.lim.budgetLeft) {
		sc.lim.budgetLeft -= cost
		if err := sc.h.obj.put(h, src, n); err != nil {
			return err
		}
	}
	e.Hash = h
	if sc.h.obj.has(h) {
		e.Flags |= Stored
	} else {
		sc.skip(e.Path, "past the snapshot budget of "+human.ExactBytes(sc.h.opts.Budget))
	}
	if fileStat(f, &after) != nil || !after.sameStat(&before) || n != e.Size ||
		after.Mtime >= sc.racyFrom || after.Ctime >= sc.racyFrom {
		e.Flags |= racy
	}
	return nil
}

// hashOf is the Hash of what r holds, and its size.
func hashOf(r io.Reader) (string, int64, error) {
	hw := sha256.New()
	n, err := io.Copy(hw, r)
	return hex.EncodeToString(hw.Sum(nil)), n, err
}

// dirChain is how undo reaches the workspace: through folders opened one
// element at a time with O_NOFOLLOW, so no symlink is ever followed,
// whoever planted it and whenever. The last chain stays open: paths in
// walk order reopen nothing.
type dirChain struct {
	paths []string // the workspace ("") first
	fds   []dirFD
}

// open returns a descriptor of folder dir ("" is the workspace), valid
// until the next call or close.
func (c *dirChain) open(dir string) (dirFD, error) {
	if i := slices.Index(c.paths, dir); i >= 0 {
		c.trim(i + 1)
		return c.fds[i], nil
	}
	fd, err := c.open(parentOf(dir))
	if err == nil {
		fd, err = openDir(fd, path.Base(dir))
	}
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
		err = fmt.Errorf("'%s' is not a folder", display(dir))
	}
	if err != nil {
		return fd, err
	}
	c.paths, c.fds = append(c.paths, dir), append(c.fds, fd)
	return fd, nil
}

func (c *dirChain) trim(n int) {
	for _, fd := range c.fds[n:] {
		closeFD(fd)
	}
	c.paths, c.fds = c.paths[:n], c.fds[:n]
}
