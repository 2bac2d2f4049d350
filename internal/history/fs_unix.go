package history

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Every access to the workspace goes through descriptors of folders
// opened one element at a time with O_NOFOLLOW, so no symlink is ever
// followed, whoever planted it and whenever: a scan or a restore cannot
// read or write outside the workspace, nor through a link inside it.

const (
	dirFlags  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
)

// openRoot opens the workspace folder itself (a symlink naming it is the
// person's choice and is followed, as os.OpenRoot does).
func openRoot(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return fd, nil
}

// fillStat copies what an entry keeps of a stat.
func fillStat(e *Entry, st *unix.Stat_t) {
	e.Size, e.Mode = st.Size, uint32(st.Mode)&0o7777
	e.Mtime, e.Ctime = st.Mtim.Nano(), st.Ctim.Nano()
	e.Ino, e.Dev = uint64(st.Ino), uint64(st.Dev)
	switch uint32(st.Mode) & unix.S_IFMT {
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
	err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	fillStat(e, &st)
	return err
}

func fstat(fd int, e *Entry) error {
	var st unix.Stat_t
	err := unix.Fstat(fd, &st)
	fillStat(e, &st)
	return err
}

// openAt opens name in dirfd with flags, again after a signal.
func openAt(dirfd int, name string, flags int) (fd int, err error) {
	for fd, err = unix.Openat(dirfd, name, flags, 0); err == unix.EINTR; {
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	return fd, err
}

// openFileAt opens a regular file of dirfd for reading. It refuses a
// symlink, and opens without blocking so that a FIFO swapped in after the
// stat cannot hang a scan; the caller checks the kind on the open file. A
// file its owner cannot read (mode 000) is opened by lifting its mode for
// the open only.
func openFileAt(dirfd int, name string) (*os.File, error) {
	fd, err := openAt(dirfd, name, fileFlags)
	if errors.Is(err, unix.EACCES) {
		var e Entry
		if lstatAt(dirfd, name, &e) == nil && e.Kind == File && chmodAt(dirfd, name, e.Mode|0o400) == nil {
			fd, err = openAt(dirfd, name, fileFlags)
			chmodAt(dirfd, name, e.Mode)
		}
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
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

// readNames lists the folder open as fd, at most limit names (more
// reports there were more).
func readNames(fd, limit int) (names []string, more bool, err error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, false, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	if _, err := f.Seek(0, 0); err != nil {
		return nil, false, err
	}
	names, err = f.Readdirnames(limit + 1)
	if len(names) > limit {
		return names[:limit], true, nil
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return names, false, err
}

// chmodAt sets the mode of name in folder fd, never through a symlink.
func chmodAt(fd int, name string, mode uint32) error {
	err := unix.Fchmodat(fd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	// Linux before 6.6 lacks fchmodat2: chmod through an O_PATH-like
	// descriptor of the path itself, as the C library does.
	pfd, err := openAt(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|oPath)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	var e Entry
	if err := fstat(pfd, &e); err != nil {
		return err
	}
	if e.Kind == Symlink {
		return unix.EOPNOTSUPP
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(pfd), mode)
}

// dirChain opens the folders of paths one element at a time, never
// following a symlink, and keeps the chain of the last path open so that
// paths handled in walk order reopen nothing.
type dirChain struct {
	root  int
	paths []string
	fds   []int
}

// open returns a descriptor of folder dir ("" is the workspace), valid
// until the next call or close.
func (c *dirChain) open(dir string) (int, error) {
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
		next, err := openAt(fd, name, dirFlags)
		p := join(done, name)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, fmt.Errorf("'%s' is not a folder", display(p))
		}
		if err != nil {
			return -1, err
		}
		c.paths, c.fds = append(c.paths, p), append(c.fds, next)
		fd, done = next, p
	}
	return fd, nil
}

// forget drops p and what is below it from the chain, after p was
// removed: a descriptor of a removed folder must not be written through.
func (c *dirChain) forget(p string) {
	if i := slices.IndexFunc(c.paths, func(q string) bool { return q == p || isBelow(q, p) }); i >= 0 {
		c.trim(i)
	}
}

func (c *dirChain) trim(n int) {
	for _, fd := range c.fds[n:] {
		unix.Close(fd)
	}
	c.paths, c.fds = c.paths[:n], c.fds[:n]
}

func (c *dirChain) close() { c.trim(0) }
