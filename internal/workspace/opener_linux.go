//go:build linux

package workspace

import (
	"container/list"
	"io"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// dirCache holds folders of the workspace open, each opened from its
// parent and never through a symlink, as the listing's walk opens them,
// up to a number of them: the one unused the longest is closed first.
type dirCache struct {
	w    *Workspace
	max  int
	dirs map[string]*list.Element
	lru  list.List // of *heldDir, the one used last first
	root int       // the workspace folder; -1 until opened
}

type heldDir struct {
	path string
	fd   int
}

func newDirCache(w *Workspace, max int) dirCache {
	return dirCache{w: w, max: max, dirs: map[string]*list.Element{}, root: -1}
}

func (c *dirCache) close() {
	for e := c.lru.Front(); e != nil; e = e.Next() {
		unix.Close(e.Value.(*heldDir).fd)
	}
	c.lru.Init()
	clear(c.dirs)
	if c.root >= 0 {
		unix.Close(c.root)
		c.root = -1
	}
}

// read reads the regular file p whole into buf if it can without
// following a symlink; false if it cannot, for whatever reason. A file
// listed as regular (see ReadListed) is not looked up before it is opened.
func (c *dirCache) read(p string, buf []byte, listed bool) ([]byte, bool) {
	clean, err := Clean(p)
	if err != nil || clean == "." {
		return nil, false
	}
	dir, name := "", clean
	if i := strings.LastIndexByte(clean, '/'); i >= 0 {
		dir, name = clean[:i], clean[i+1:]
	}
	dirfd := c.dir(dir)
	if dirfd < 0 {
		return nil, false
	}
	// Looked up before it is opened, as OpenRegular does: opening a
	// device may itself do something. Opened without blocking, in case a
	// named pipe took its place since.
	var before, st unix.Stat_t
	if !listed && (unix.Fstatat(dirfd, name, &before, unix.AT_SYMLINK_NOFOLLOW) != nil || before.Mode&syscall.S_IFMT != syscall.S_IFREG) {
		return nil, false
	}
	fd, err := openAt(dirfd, name, openFileFlags)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	if unix.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || !listed && (st.Dev != before.Dev || st.Ino != before.Ino) {
		return nil, false
	}
	data, err := readAllInto(fdReader(fd), st.Size, buf)
	if err != nil {
		return nil, false
	}
	return data, true
}

// dir returns the descriptor of the folder dir ("" for the workspace
// itself), opening it from its parent's if it is not held; -1 if it cannot
// be opened so.
func (c *dirCache) dir(dir string) int {
	if dir == "" {
		if c.root < 0 {
			fd, err := c.w.rootFD()
			if err != nil {
				return -1
			}
			c.root = fd
		}
		return c.root
	}
	if e, ok := c.dirs[dir]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*heldDir).fd
	}
	parent, name := "", dir
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		parent, name = dir[:i], dir[i+1:]
	}
	pfd := c.dir(parent)
	if pfd < 0 {
		return -1
	}
	fd, err := openDirAt(pfd, name)
	if err != nil {
		return -1
	}
	if c.lru.Len() >= c.max {
		oldest := c.lru.Back()
		d := oldest.Value.(*heldDir)
		unix.Close(d.fd)
		delete(c.dirs, d.path)
		c.lru.Remove(oldest)
	}
	c.dirs[dir] = c.lru.PushFront(&heldDir{path: dir, fd: fd})
	return fd
}

// openAt opens name in the folder dirfd, again when a signal interrupts.
// openFileFlags open a file that should be a regular one, to check once
// open: never through a symlink, without blocking in case a named pipe
// took its place, and without making a terminal courier's.
const openFileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

func openAt(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// fdReader reads a raw descriptor, again when a signal interrupts; 0
// bytes read is the end.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(r), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
