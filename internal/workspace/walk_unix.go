//go:build unix

package workspace

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// folder is a folder a walk holds open.
type folder = *os.File

// nonBlock: a named pipe swapped in for a file must not block its open.
const nonBlock = unix.O_NONBLOCK

func openTop(r *os.Root) (folder, error) { return r.Open(".") }

// openDirAt opens the folder name ("..": the parent) of dir.
func openDirAt(dir folder, name string) (folder, error) { return openAt(dir, name, unix.O_DIRECTORY) }

// openFileAt opens what should be a regular file, to check once open,
// without blocking and without making a terminal courier's.
func openFileAt(dir folder, name string) (*os.File, error) {
	return openAt(dir, name, unix.O_NONBLOCK|unix.O_NOCTTY)
}

// openAt opens name in dir for reading, never through a link.
func openAt(dir *os.File, name string, flags int) (*os.File, error) {
	for {
		fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// lstatAt sets e's size and kind from name in dir; false if none.
func lstatAt(dir folder, name string, e *Entry) bool {
	var st unix.Stat_t
	if unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	e.Size, e.Regular = st.Size, st.Mode&unix.S_IFMT == unix.S_IFREG
	return true
}

// FileID returns the device and inode of a file info.
func FileID(info fs.FileInfo) (dev, ino uint64, ok bool) {
	if st, isStat := info.Sys().(*syscall.Stat_t); isStat {
		return uint64(st.Dev), uint64(st.Ino), true
	}
	return 0, 0, false
}
