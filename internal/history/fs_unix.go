//go:build unix

package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

type dirFD = int

const (
	dirFlags  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
)

// openRoot opens the workspace folder, following a symlink naming it: the person's choice.
func openRoot(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return fd, nil
}

// fill copies what an entry keeps of a stat, once stat has filled st.
func fill(e *Entry, st *unix.Stat_t, err error) error {
	e.Size, e.Mode = 0, uint32(st.Mode)&0o7777
	e.Mtime, e.Ctime = st.Mtim.Nano(), st.Ctim.Nano()
	e.Ino, e.Dev = uint64(st.Ino), uint64(st.Dev)
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFREG:
		e.Kind, e.Size = File, st.Size
	case unix.S_IFDIR:
		e.Kind = Dir
	case unix.S_IFLNK:
		e.Kind, e.Size = Symlink, st.Size
	case unix.S_IFIFO:
		e.Kind = FIFO
	case unix.S_IFSOCK:
		e.Kind = Socket
	default:
		e.Kind = Device
	}
	return err
}

func lstatAt(dirfd int, name string, e *Entry) error {
	var st unix.Stat_t
	return fill(e, &st, unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW))
}

func fileStat(f *os.File, e *Entry) error {
	var st unix.Stat_t
	return fill(e, &st, unix.Fstat(int(f.Fd()), &st))
}

// openAt retries an open a signal interrupted, as os.OpenFile does (some
// file systems return EINTR despite SA_RESTART).
func openAt(dirfd int, name string, flags int) (fd int, err error) {
	for fd, err = unix.Openat(dirfd, name, flags, 0); err == unix.EINTR; {
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	return fd, err
}

func readlinkAt(dirfd int, name string) (string, error) {
	buf := make([]byte, 4096) // PATH_MAX
	n, err := unix.Readlinkat(dirfd, name, buf)
	return string(buf[:max(n, 0)]), err
}

// dirFile opens folder fd again, to be listed from its start.
func dirFile(fd int) (*os.File, error) {
	again, err := openAt(fd, ".", dirFlags)
	return os.NewFile(uintptr(again), ""), err
}

// chmodAt sets the mode of name in folder fd, never through a symlink.
func chmodAt(fd int, name string, mode uint32) error {
	err := unix.Fchmodat(fd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if !errors.Is(err, unix.EOPNOTSUPP) {
		return err
	}
	// Linux before 6.6 lacks fchmodat2: chmod through an O_PATH-like
	// descriptor of the path itself, as the C library does.
	pfd, err := openAt(fd, name, fileFlags|oPath)
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

func closeFD(fd int) { unix.Close(fd) }

func unlinkAt(fd int, name string) error { return unix.Unlinkat(fd, name, 0) }

func rmdirAt(fd int, name string) error { return unix.Unlinkat(fd, name, unix.AT_REMOVEDIR) }

func mkdirAt(fd int, name string, mode uint32) error { return unix.Mkdirat(fd, name, mode) }

func symlinkAt(target string, fd int, name string) error { return unix.Symlinkat(target, fd, name) }

func renameAt(fd int, from, to string) error { return unix.Renameat(fd, from, fd, to) }

func createAt(fd int, name string) (*os.File, error) {
	nfd, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	return os.NewFile(uintptr(nfd), name), err
}

func fchmod(f *os.File, mode uint32) error { return unix.Fchmod(int(f.Fd()), mode) }

func openDir(fd int, name string) (int, error) { return openAt(fd, name, dirFlags) }

// openFileAt opens a file of dirfd for reading: never a symlink, without
// blocking on a FIFO swapped in (the caller checks the kind), and a file
// of mode 000 by lifting its mode for the open only.
func openFileAt(dirfd int, name string) (*os.File, error) {
	fd, err := openAt(dirfd, name, fileFlags)
	if errors.Is(err, fs.ErrPermission) {
		var e Entry
		if lstatAt(dirfd, name, &e) == nil && e.Kind == File && chmodAt(dirfd, name, e.Mode|0o400) == nil {
			fd, err = openAt(dirfd, name, fileFlags)
			chmodAt(dirfd, name, e.Mode)
		}
	}
	return os.NewFile(uintptr(fd), name), err
}

// lockFile takes an flock on f without waiting: errBusy while another
// process holds one that excludes it.
func lockFile(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errBusy
	}
	return err
}

func unlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// processAlive reports whether the process pid runs (or cannot be told).
func processAlive(pid int) bool { return !errors.Is(unix.Kill(pid, 0), unix.ESRCH) }
