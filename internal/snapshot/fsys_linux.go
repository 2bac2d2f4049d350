package snapshot

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Every access to the workspace goes through file descriptors of folders
// opened one element at a time with O_NOFOLLOW, so no symlink is ever
// followed, whoever planted it and whenever: a scan or a restore cannot
// read or write outside the workspace.

const (
	dirFlags  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
)

// openRoot opens the workspace folder itself (a symlink naming it is
// the person's choice and is followed, as os.OpenRoot does).
func openRoot(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return fd, nil
}

// fillStat copies what a snapshot keeps of a stat.
func fillStat(e *Entry, st *unix.Stat_t) {
	e.Size = st.Size
	e.Mtime = st.Mtim.Nano()
	e.Ctime = st.Ctim.Nano()
	e.Ino = st.Ino
	e.Dev = st.Dev
	e.Mode = st.Mode & 0o7777
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		e.Kind = File
	case unix.S_IFDIR:
		e.Kind = Dir
	case unix.S_IFLNK:
		e.Kind = Symlink
	case unix.S_IFIFO:
		e.Kind = FIFO
	case unix.S_IFSOCK:
		e.Kind = Socket
	default:
		e.Kind = Device
	}
	if e.Kind != File && e.Kind != Symlink {
		e.Size = 0
	}
}

// lstatAt describes name in folder dirfd without following it.
func lstatAt(dirfd int, name string, e *Entry) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	fillStat(e, &st)
	return nil
}

func fstat(fd int, e *Entry) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	fillStat(e, &st)
	return nil
}

// openDirAt opens a folder of dirfd, refusing a symlink.
func openDirAt(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, dirFlags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// openFileAt opens a regular file of dirfd for reading. It refuses a
// symlink, and opens without blocking so that a FIFO swapped in after the
// stat cannot hang the scan; the caller checks the kind on the open file.
// A file its owner cannot read (mode 000) is opened by lifting its mode
// for the open only.
func openFileAt(dirfd int, name string) (*os.File, error) {
	fd, err := openat(dirfd, name)
	if errors.Is(err, unix.EACCES) {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG &&
			chmodAt(dirfd, name, st.Mode&0o7777|0o400) == nil {
			fd, err = openat(dirfd, name)
			chmodAt(dirfd, name, st.Mode&0o7777)
		}
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

func openat(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, fileFlags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// readlinkAt returns a symlink's target.
func readlinkAt(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// readNames lists a folder, at most max names (truncated reports more).
func readNames(fd int, buf []byte, max int) (names []string, truncated bool, err error) {
	// The workspace folder's descriptor serves every scan: rewind it.
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return nil, false, err
	}
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if n <= 0 {
			return names, false, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		if len(names) > max {
			return names[:max], true, nil
		}
	}
}

// dirChain opens the folders of paths one element at a time, never
// following a symlink, and keeps the chain of the last path open so that
// paths handled in walk order reopen nothing.
type dirChain struct {
	root  int
	paths []string
	fds   []int
}

// errNotDir reports a path element that is not a real folder (a symlink,
// a file): nothing below it is reachable without following it.
type errNotDir struct{ path string }

func (e *errNotDir) Error() string {
	return fmt.Sprintf("'%s' is not a folder", display(e.path))
}

// open returns a descriptor of folder dir ("" is the workspace), valid
// until the next call or close.
func (c *dirChain) open(dir string) (int, error) {
	if dir == "" {
		c.trim(0)
		return c.root, nil
	}
	keep := 0
	for keep < len(c.paths) && (c.paths[keep] == dir || isBelow(dir, c.paths[keep])) {
		keep++
	}
	c.trim(keep)
	fd, done := c.root, ""
	if keep > 0 {
		fd, done = c.fds[keep-1], c.paths[keep-1]
	}
	if done == dir {
		return fd, nil
	}
	rest := dir
	if done != "" {
		rest = dir[len(done)+1:]
	}
	for _, name := range strings.Split(rest, "/") {
		next, err := openDirAt(fd, name)
		p := join(done, name)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return -1, &errNotDir{path: p}
			}
			return -1, err
		}
		c.paths = append(c.paths, p)
		c.fds = append(c.fds, next)
		fd, done = next, p
	}
	return fd, nil
}

// forget drops p and what is below it from the chain, after p was
// removed: a descriptor of a removed folder must not be written through.
func (c *dirChain) forget(p string) {
	for i, q := range c.paths {
		if q == p || isBelow(q, p) {
			c.trim(i)
			return
		}
	}
}

// trim closes the chain's folders from position n on.
func (c *dirChain) trim(n int) {
	for i := n; i < len(c.fds); i++ {
		unix.Close(c.fds[i])
	}
	c.paths, c.fds = c.paths[:n], c.fds[:n]
}

func (c *dirChain) close() { c.trim(0) }

// syncFS makes everything written to the file systems holding dirs
// durable, with one call per file system, where an fsync per file would
// cost a journal commit each.
func syncFS(dirs ...string) error {
	done := map[uint64]bool{}
	for _, dir := range dirs {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
		var st unix.Stat_t
		if err = unix.Fstat(fd, &st); err == nil && !done[st.Dev] {
			done[st.Dev] = true
			err = unix.Syncfs(fd)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
	}
	return nil
}

// chmodAt sets the mode of name in folder fd, never through a symlink.
func chmodAt(fd int, name string, mode uint32) error {
	err := unix.Fchmodat(fd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	// Kernels before 6.6 lack fchmodat2: chmod through an O_PATH
	// descriptor of the path itself, as the C library does.
	pfd, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return unix.EOPNOTSUPP
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(pfd), mode)
}
