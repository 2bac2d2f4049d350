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
// time, and climbs back through "..", checked against the folder it left
// (device and inode), rather than resolving a path from the root at every
// folder, which made a chain of 5,000 nested folders take minutes. At most
// two folders are open at once, whatever the depth.
func (w *Workspace) walk(h walkHooks) error {
	fd, err := w.rootFD()
	if err != nil {
		return err
	}
	wk := walker{w: w, h: h, buf: make([]byte, 32<<10), cur: fd}
	defer wk.closeCur()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("list workspace: %w", err)
	}
	wk.stack = []walkDir{{path: "", dev: st.Dev, ino: st.Ino}}
	if err := wk.read(&wk.stack[0], nil); err != nil {
		return fmt.Errorf("list workspace: %w", err)
	}
	wk.run()
	return nil
}

// walkDir is a folder on the walk's path from the root: where it is, what
// it is (to recognise it when climbing back), its entries in path order
// and how many it has visited, how many of the rest are folders, and what
// its ignore files say.
type walkDir struct {
	path     string
	dev, ino uint64
	ents     []dirent
	next     int
	dirs     int
	ignore   *ignoreDir
}

type walker struct {
	w       *Workspace
	h       walkHooks
	buf     []byte
	cur     int // the open folder, the top of stack; -1 when none is
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
			if d.ents[i].name == name {
				return readSmallAt(wk.cur, name)
			}
		}
		return nil
	})
}

// readSmallAt reads the regular file name in the folder dirfd, never
// through a symlink and never more than maxIgnoreFile bytes; nil if there
// is none.
func readSmallAt(dirfd int, name string) []byte {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > maxIgnoreFile {
		return nil
	}
	data := make([]byte, 0, st.Size+1)
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
		if wk.h.visit(walkEntry{path: de.path, name: de.name, isDir: isDir, size: de.size}, top.ignore) && isDir {
			wk.descend(de.path, de.name)
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
	parent := wk.cur
	wk.cur = fd
	// Reuse the entries of a folder this deep walked before.
	n := len(wk.stack)
	if n < cap(wk.stack) {
		wk.stack = wk.stack[:n+1]
	} else {
		wk.stack = append(wk.stack, walkDir{})
	}
	d := &wk.stack[n]
	*d = walkDir{path: path, dev: st.Dev, ino: st.Ino, ents: d.ents[:0]}
	if err := wk.read(d, wk.stack[n-1].ignore); err != nil {
		// Unreadable: what was read is not trusted, and none of it walked.
		d.ents = d.ents[:0]
	}
	// The parent stays open only while the child is opened: climbing back
	// reopens it through "..".
	unix.Close(parent)
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
		d.ents = wk.parse(d.ents, d.path, wk.buf[:n])
	}
	wk.enter(d, parent)
	wk.statAll(d.ents)
	d.ents = slices.DeleteFunc(d.ents, func(de dirent) bool { return de.gone })
	slices.SortFunc(d.ents, compareDirents)
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

// dirent is a folder entry as read, then looked up.
type dirent struct {
	path string // from the workspace root
	name string // the end of path
	typ  uint8  // a DT_ value
	size int64
	gone bool // vanished before it could be looked up
}

// compareDirents orders the entries of one folder as their paths and the
// paths below them sort: a folder's name as if it ended in "/", since
// "a-b" sorts before "a/x" but "a" before "a-b".
func compareDirents(a, b dirent) int {
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	return cmp.Compare(nextByte(a, n), nextByte(b, n))
}

// nextByte is the byte of e's sort key at i, the name's own length being
// the "/" of a folder; -1 past the end.
func nextByte(e dirent, i int) int {
	switch {
	case i < len(e.name):
		return int(e.name[i])
	case i == len(e.name) && e.typ == unix.DT_DIR:
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

// parse appends the entries of a getdents buffer to ents, entries of the
// folder at dir. Each entry's path is made once and its name is the end
// of it.
func (wk *walker) parse(ents []dirent, dir string, buf []byte) []dirent {
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
		var p string
		if dir == "" {
			p = string(raw)
		} else {
			p = dir + "/" + string(raw)
		}
		ents = append(ents, dirent{path: p, name: p[len(p)-len(raw):], typ: rec[direntType]})
	}
	return ents
}

// parallelStat is how many entries a folder needs before its lookups are
// shared with a second goroutine.
const parallelStat = 64

// statAll looks up the entries that need it: those getdents could not
// type, and, when sizes are wanted, all but folders.
func (wk *walker) statAll(ents []dirent) {
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
		wk.stat(ents, need)
		return
	}
	half := len(ents) / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		wk.stat(ents[half:], need)
	}()
	wk.stat(ents[:half], need)
	wg.Wait()
}

func (wk *walker) stat(ents []dirent, need func(*dirent) bool) {
	var st unix.Stat_t
	for i := range ents {
		de := &ents[i]
		if !need(de) {
			continue
		}
		if unix.Fstatat(wk.cur, de.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			de.gone = true
			continue
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			de.typ = unix.DT_DIR
		} else {
			de.size = st.Size
		}
	}
}

// joinPath joins a folder's slash path ("" for the root) and a name.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
