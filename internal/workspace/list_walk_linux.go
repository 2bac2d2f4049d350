//go:build linux

package workspace

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// walkInPathOrder says walk visits entries in the order of their paths.
const walkInPathOrder = true

// walk calls h.visit for every entry below the workspace root in the
// order of their paths (a folder before what it holds); visit's result for
// a folder says whether to walk into it. A folder that cannot be read is
// left out. Visiting in path order spares a listing the sort of all its
// paths: sorting each folder's names costs far less.
//
// The walk costs the same for every entry however deep it lies: it holds
// the folder it reads open and opens each subfolder from it, one name at a
// time, rather than resolving a path from the root at every folder, which
// made a chain of 5,000 nested folders take minutes. The first heldOpen
// folders on the way down stay open, to go back to; below them the walk
// climbs back through "..", checked against the folder it left (device
// and inode), so that a walk holds at most heldOpen+2 folders open,
// whatever the depth.
func (w *Workspace) walk(h walkHooks) error {
	fd, err := w.rootFD()
	if err != nil {
		return err
	}
	wk := walker{w: w, h: h, buf: make([]byte, 32<<10), cur: fd}
	defer wk.closeAll()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("list workspace: %w", err)
	}
	wk.stack = []walkDir{{path: "", dev: st.Dev, ino: st.Ino, held: -1}}
	if err := wk.read(&wk.stack[0], nil); err != nil {
		return fmt.Errorf("list workspace: %w", err)
	}
	wk.run()
	return nil
}

// heldOpen is how many folders on the walk's path from the root stay open
// while it walks below them: going back to one costs nothing, where
// climbing through ".." costs three system calls.
const heldOpen = 32

// walkDir is a folder on the walk's path from the root: where it is, what
// it is (to recognise it when climbing back), the folder held open while
// the walk is below it (-1 if none), its entries in path order and how
// many it has visited, how many of the rest are folders, and what its
// ignore files say.
type walkDir struct {
	path     string
	dev, ino uint64
	held     int
	ents     []dirent
	next     int
	dirs     int
	ignore   *ignoreDir
}

// name is the name of an entry of d: the end of its path.
func (d *walkDir) name(de *dirent) string {
	if d.path == "" {
		return de.path
	}
	return de.path[len(d.path)+1:]
}

type walker struct {
	w       *Workspace
	h       walkHooks
	buf     []byte
	names   []byte // the names of the folder being read, end to end
	ends    []int  // where each name ends in names
	cur     int    // the open folder, the top of stack; -1 when none is
	stack   []walkDir
	pending int // folders on the stack with subfolders still to visit
}

// enter runs the enter hook for the folder just read. Its reader only
// opens names the folder listed: most folders have no .gitignore, and
// trying to open one in each cost a failed system call per folder.
func (wk *walker) enter(d *walkDir, parent *ignoreDir) {
	if wk.h.enter == nil {
		return
	}
	d.ignore = wk.h.enter(d.path, parent, func(name string) []byte {
		for i := range d.ents {
			if d.name(&d.ents[i]) == name {
				return readSmallAt(wk.cur, name)
			}
		}
		return nil
	})
}

// readSmallAt reads the regular file name in the folder dirfd, never
// through a symlink and never more than maxIgnoreBytes and a byte (see
// readIgnore); nil if there is none.
func readSmallAt(dirfd int, name string) []byte {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil
	}
	data := make([]byte, 0, min(st.Size, maxIgnoreBytes)+1)
	for {
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil
		}
		if n == 0 || len(data)+n >= cap(data) {
			return data[:len(data)+n]
		}
		data = data[:len(data)+n]
	}
}

// rootFD opens the workspace folder itself through its os.Root, so the
// walk starts where every other file operation does.
func (w *Workspace) rootFD() (int, error) {
	f, err := w.root.Open(".")
	if err != nil {
		return -1, fmt.Errorf("list workspace: %w", err)
	}
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("list workspace: %w", err)
	}
	fd := -1
	cerr := sc.Control(func(raw uintptr) {
		fd, err = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil {
		err = cerr
	}
	if err != nil {
		return -1, fmt.Errorf("list workspace: %w", err)
	}
	return fd, nil
}

// step counts n of the walk's steps (see walkHooks.steps).
func (wk *walker) step(n int) {
	if wk.h.steps != nil {
		*wk.h.steps += n
	}
}

func (wk *walker) closeCur() {
	if wk.cur >= 0 {
		unix.Close(wk.cur)
		wk.cur = -1
	}
}

// closeAll closes the open folder and those held open.
func (wk *walker) closeAll() {
	wk.closeCur()
	for i := range wk.stack {
		if d := &wk.stack[i]; d.held >= 0 {
			unix.Close(d.held)
			d.held = -1
		}
	}
}

// run visits the entries of the deepest folder on the stack in turn,
// walking into each subfolder visit wants walked as it comes, and climbs
// back up when a folder is done.
func (wk *walker) run() {
	for len(wk.stack) > 0 {
		top := &wk.stack[len(wk.stack)-1]
		if top.next == len(top.ents) {
			wk.stack = wk.stack[:len(wk.stack)-1]
			if len(wk.stack) == 0 {
				return
			}
			if up := &wk.stack[len(wk.stack)-1]; up.held >= 0 {
				wk.closeCur()
				wk.cur, up.held = up.held, -1
				continue
			}
			if wk.pending == 0 {
				// No folder is left to open: the files still to visit
				// on the way up need no open folder.
				wk.closeCur()
				continue
			}
			if !wk.climb() {
				// The folder cannot be reached again: skip its
				// subfolders still to walk.
				wk.drop(&wk.stack[len(wk.stack)-1])
			}
			continue
		}
		de := &top.ents[top.next]
		top.next++
		isDir := de.typ == unix.DT_DIR
		if isDir {
			if top.dirs == 0 {
				continue // dropped
			}
			if top.dirs--; top.dirs == 0 {
				wk.pending--
			}
		}
		e := walkEntry{path: de.path, name: top.name(de), isDir: isDir, size: de.size, regular: de.typ == unix.DT_REG}
		if wk.h.visit(e, top.ignore) && isDir {
			wk.descend(e.path, e.name)
		}
	}
}

// drop forgets the subfolders of d still to walk.
func (wk *walker) drop(d *walkDir) {
	if d.dirs > 0 {
		wk.pending--
		d.dirs = 0
	}
}

// descend opens the subfolder name of the open folder, at path, and reads
// it; a subfolder that cannot be opened (gone, forbidden, replaced by a
// symlink) is skipped.
func (wk *walker) descend(path, name string) {
	wk.step(1)
	fd, err := openDirAt(wk.cur, name)
	if err != nil {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		unix.Close(fd)
		return
	}
	n := len(wk.stack)
	if n <= heldOpen {
		wk.stack[n-1].held = wk.cur
	} else {
		// Deeper, the parent is closed: climbing back reopens it
		// through "..".
		unix.Close(wk.cur)
	}
	wk.cur = fd
	// Reuse the entries of a folder this deep walked before.
	if n < cap(wk.stack) {
		wk.stack = wk.stack[:n+1]
	} else {
		wk.stack = append(wk.stack, walkDir{})
	}
	d := &wk.stack[n]
	*d = walkDir{path: path, dev: st.Dev, ino: st.Ino, held: -1, ents: d.ents[:0]}
	if err := wk.read(d, wk.stack[n-1].ignore); err != nil {
		// Unreadable: what was read is not trusted, and none of it walked.
		d.ents = d.ents[:0]
	}
}

// climb makes the folder at the top of the stack the open one again,
// through ".." of the open folder when that is still the folder the walk
// came from (device and inode), else by its path from the root.
func (wk *walker) climb() bool {
	want := &wk.stack[len(wk.stack)-1]
	if wk.cur >= 0 {
		wk.step(1)
		fd, err := openDirAt(wk.cur, "..")
		if err == nil {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil && st.Dev == want.dev && st.Ino == want.ino {
				unix.Close(wk.cur)
				wk.cur = fd
				return true
			}
			unix.Close(fd)
		}
		wk.closeCur()
	}
	fd, err := wk.reopen(want)
	if err != nil {
		return false
	}
	wk.cur = fd
	return true
}

// reopen opens a folder on the stack by its path through the workspace's
// os.Root and checks it is still the same folder.
func (wk *walker) reopen(d *walkDir) (int, error) {
	p := d.path
	if p == "" {
		p = "."
	}
	wk.step(strings.Count(p, "/") + 1)
	f, err := wk.w.root.Open(p)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	fd := -1
	sc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	if cerr := sc.Control(func(raw uintptr) { fd, err = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0) }); cerr != nil {
		return -1, cerr
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != d.dev || st.Ino != d.ino {
		unix.Close(fd)
		return -1, errors.New("folder moved during the listing")
	}
	return fd, nil
}

// openDirAt opens the folder name in the folder dirfd, never through a
// symlink.
func openDirAt(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

// read lists the open folder's entries into d: it reads them all, runs
// the enter hook with parent, what it returned for the folder above, looks
// up the sizes and kinds getdents does not give (two at a time in a large
// folder, since each is a system call), and sorts them in path order.
func (wk *walker) read(d *walkDir, parent *ignoreDir) error {
	d.ents = d.ents[:0]
	wk.names, wk.ends = wk.names[:0], wk.ends[:0]
	for {
		wk.step(1)
		n, err := unix.Getdents(wk.cur, wk.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			break
		}
		d.ents = wk.parse(d.ents, wk.buf[:n])
	}
	wk.makePaths(d)
	wk.enter(d, parent)
	wk.statAll(d)
	d.ents = slices.DeleteFunc(d.ents, func(de dirent) bool { return de.gone })
	base := len(d.path) + 1
	if d.path == "" {
		base = 0
	}
	slices.SortFunc(d.ents, func(a, b dirent) int { return compareNames(a.path[base:], a.typ, b.path[base:], b.typ) })
	for i := range d.ents {
		if d.ents[i].typ == unix.DT_DIR {
			d.dirs++
		}
	}
	if d.dirs > 0 {
		wk.pending++
	}
	return nil
}

// dirent is a folder entry as read, then looked up: small, since a
// folder's entries are sorted.
type dirent struct {
	path string // from the workspace root; its end is the entry's name
	size int64
	typ  uint8 // a DT_ value
	gone bool  // vanished before it could be looked up
}

// compareNames orders the entries of one folder, by name and type (a DT_
// value), as their paths and the paths below them sort: a folder's name
// as if it ended in "/", since "a-b" sorts before "a/x" but "a" before
// "a-b".
func compareNames(a string, at uint8, b string, bt uint8) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	return cmp.Compare(nextByte(a, at, n), nextByte(b, bt, n))
}

// nextByte is the byte of the sort key of name (of type typ) at i, the
// name's own length being the "/" of a folder; -1 past the end.
func nextByte(name string, typ uint8, i int) int {
	switch {
	case i < len(name):
		return int(name[i])
	case i == len(name) && typ == unix.DT_DIR:
		return '/'
	}
	return -1
}

// Offsets in a struct linux_dirent64 (see getdents64(2)).
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// parse appends the entries of a getdents buffer to ents, their names to
// wk.names; makePaths gives them their paths.
func (wk *walker) parse(ents []dirent, buf []byte) []dirent {
	for len(buf) > direntName {
		reclen := int(binary.NativeEndian.Uint16(buf[direntReclen:]))
		if reclen <= direntName || reclen > len(buf) {
			return ents
		}
		rec := buf[:reclen]
		buf = buf[reclen:]
		raw := rec[direntName:]
		if i := bytes.IndexByte(raw, 0); i >= 0 {
			raw = raw[:i]
		}
		if len(raw) == 0 || (raw[0] == '.' && (len(raw) == 1 || (len(raw) == 2 && raw[1] == '.'))) {
			continue
		}
		wk.names = append(wk.names, raw...)
		wk.ends = append(wk.ends, len(wk.names))
		ents = append(ents, dirent{typ: rec[direntType]})
	}
	return ents
}

// makePaths gives the entries of d their paths, all made in one string:
// one allocation a folder rather than one an entry.
func (wk *walker) makePaths(d *walkDir) {
	prefix := 0
	if d.path != "" {
		prefix = len(d.path) + 1
	}
	var b strings.Builder
	b.Grow(len(wk.names) + prefix*len(d.ents))
	start := 0
	for _, end := range wk.ends {
		if prefix > 0 {
			b.WriteString(d.path)
			b.WriteByte('/')
		}
		b.Write(wk.names[start:end])
		start = end
	}
	all := b.String()
	off, start := 0, 0
	for i, end := range wk.ends {
		n := prefix + end - start
		d.ents[i].path = all[off : off+n]
		off, start = off+n, end
	}
}

// parallelStat is how many entries a folder needs before its lookups are
// shared with a second goroutine.
const parallelStat = 64

// statAll looks up the entries of d that need it: those getdents could
// not type, and, when sizes are wanted, all but folders.
func (wk *walker) statAll(d *walkDir) {
	ents := d.ents
	need := func(de *dirent) bool {
		return de.typ == unix.DT_UNKNOWN || (wk.h.withSize && de.typ != unix.DT_DIR)
	}
	n := 0
	for i := range ents {
		if need(&ents[i]) {
			n++
		}
	}
	wk.step(n)
	if n < parallelStat || runtime.GOMAXPROCS(0) < 2 {
		wk.stat(d, ents, need)
		return
	}
	half := len(ents) / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		wk.stat(d, ents[half:], need)
	}()
	wk.stat(d, ents[:half], need)
	wg.Wait()
}

// stat looks up those of ents, entries of d, that need it.
func (wk *walker) stat(d *walkDir, ents []dirent, need func(*dirent) bool) {
	var st unix.Stat_t
	for i := range ents {
		de := &ents[i]
		if !need(de) {
			continue
		}
		if unix.Fstatat(wk.cur, d.name(de), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			de.gone = true
			continue
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			de.typ = unix.DT_DIR
		case syscall.S_IFREG:
			de.typ, de.size = unix.DT_REG, st.Size
		default:
			// Not a regular file, whatever the folder's entry said.
			de.typ, de.size = unix.DT_UNKNOWN, st.Size
			if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
				de.typ = unix.DT_LNK
			}
		}
	}
}
