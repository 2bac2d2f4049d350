//go:build linux

package workspace

import (
	"bytes"
	"io"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// describeAll looks up the size of each file among entries (sorted by
// path; folder summaries are left alone) and marks the binary ones; files
// that are gone, or whose folder is, are dropped. It moves one open folder
// from file to file, climbing through ".." and descending one name at a
// time, so that files deep in the tree cost no more than shallow ones:
// resolving each path from the root made 300 files 5,000 folders deep take
// seconds.
func (w *Workspace) describeAll(entries []Entry) []Entry {
	c := dirCursor{w: w, fd: -1}
	defer c.close()
	buf := make([]byte, sniffSize)
	out := entries[:0]
	for _, e := range entries {
		if !e.IsDir {
			dir, name := "", e.Path
			if j := strings.LastIndexByte(e.Path, '/'); j >= 0 {
				dir, name = e.Path[:j], e.Path[j+1:]
			}
			if !c.moveTo(dir) || !describeAt(c.fd, name, buf, &e) {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// describeAt looks up the entry name in the folder dirfd, never through a
// symlink, sets e's size, and, for a regular file, reads its start without
// blocking and marks it binary when that holds a NUL byte. Nothing but a
// regular file is opened: an entry the walk did not find to be one is
// looked up first, since opening a device may itself do something. One
// it did is opened at once and checked once open; a device cannot take
// its place without privileges that would make the check moot. It
// reports false when there is no such entry.
func describeAt(dirfd int, name string, buf []byte, e *Entry) bool {
	if !e.Regular {
		var before unix.Stat_t
		if unix.Fstatat(dirfd, name, &before, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return false
		}
		e.Size = before.Size
		if before.Mode&syscall.S_IFMT != syscall.S_IFREG {
			return true
		}
	}
	fd, err := openAt(dirfd, name, openFileFlags)
	if err != nil {
		if e.Regular {
			// Gone, or no longer a regular file.
			var st unix.Stat_t
			if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				return false
			}
			e.Size, e.Regular = st.Size, st.Mode&syscall.S_IFMT == syscall.S_IFREG
		}
		return true
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		e.Regular = false
		return true
	}
	e.Size, e.Regular = st.Size, true
	// The start of the file as large as it is: a file shorter than the
	// buffer needs no read that finds its end.
	want := int(min(int64(len(buf)), st.Size))
	n, _ := io.ReadFull(fdReader(fd), buf[:want])
	e.Binary = bytes.IndexByte(buf[:n], 0) >= 0
	return true
}

// dirCursor holds one folder of the workspace open and moves it to
// another, through the folders they share.
type dirCursor struct {
	w     *Workspace
	fd    int      // the open folder; -1 before the first move
	names []string // its path from the root
	ids   []devIno // the folders from the root down to it
}

type devIno struct{ dev, ino uint64 }

func (c *dirCursor) close() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// moveTo opens the folder dir (a slash path, "" for the root) and reports
// whether it could.
func (c *dirCursor) moveTo(dir string) bool {
	var names []string
	if dir != "" {
		names = strings.Split(dir, "/")
	}
	if c.fd < 0 && !c.reset() {
		return false
	}
	shared := 0
	for shared < len(names) && shared < len(c.names) && names[shared] == c.names[shared] {
		shared++
	}
	for len(c.names) > shared {
		if !c.up() && !c.fromRoot(shared) {
			return false
		}
	}
	for _, n := range names[shared:] {
		if !c.down(n) {
			c.close()
			return false
		}
	}
	return true
}

// reset opens the root.
func (c *dirCursor) reset() bool {
	c.close()
	fd, err := c.w.rootFD()
	if err != nil {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		unix.Close(fd)
		return false
	}
	c.fd, c.names, c.ids = fd, c.names[:0], append(c.ids[:0], devIno{st.Dev, st.Ino})
	return true
}

// up climbs to the parent folder through "..", if it is still the folder
// the cursor came from.
func (c *dirCursor) up() bool {
	fd, err := openDirAt(c.fd, "..")
	if err != nil {
		return false
	}
	var st unix.Stat_t
	if want := c.ids[len(c.ids)-2]; unix.Fstat(fd, &st) != nil || st.Dev != want.dev || st.Ino != want.ino {
		unix.Close(fd)
		return false
	}
	unix.Close(c.fd)
	c.fd = fd
	c.names, c.ids = c.names[:len(c.names)-1], c.ids[:len(c.ids)-1]
	return true
}

// fromRoot reopens the cursor's first depth folders from the root, when
// climbing failed because something moved them.
func (c *dirCursor) fromRoot(depth int) bool {
	names := append([]string(nil), c.names[:depth]...)
	if !c.reset() {
		return false
	}
	for _, n := range names {
		if !c.down(n) {
			c.close()
			return false
		}
	}
	return true
}

// down opens the subfolder name, never through a symlink.
func (c *dirCursor) down(name string) bool {
	fd, err := openDirAt(c.fd, name)
	if err != nil {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		unix.Close(fd)
		return false
	}
	unix.Close(c.fd)
	c.fd = fd
	c.names, c.ids = append(c.names, name), append(c.ids, devIno{st.Dev, st.Ino})
	return true
}
