//go:build unix

package workspace

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// folder is a folder a walk holds open: each is opened from its parent,
// never through a symlink.
type folder = *os.File

// nonBlock opens a file without blocking, in case a named pipe took its
// place.
const nonBlock = unix.O_NONBLOCK

// openTop opens the workspace folder for a walk.
func openTop(r *os.Root) (folder, error) { return r.Open(".") }

// openDirAt opens the folder name ("..": the parent) of dir.
func openDirAt(dir folder, name string) (folder, error) { return openAt(dir, name, unix.O_DIRECTORY) }

// openFileAt opens name in dir, which should be a regular file, to check
// once open: without blocking and without making a terminal courier's.
func openFileAt(dir folder, name string) (*os.File, error) {
	return openAt(dir, name, unix.O_NONBLOCK|unix.O_NOCTTY)
}

// openAt opens name in the folder dir for reading, never through a
// symlink.
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

// lstatAt sets e's size and kind from the entry name of the folder dir,
// never through a symlink; false when there is none.
func lstatAt(dir folder, name string, e *Entry) bool {
	var st unix.Stat_t
	if unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	e.Size, e.Regular = st.Size, st.Mode&unix.S_IFMT == unix.S_IFREG
	return true
}

// FileID returns the device and inode of a file info, where the system
// gives them.
func FileID(info fs.FileInfo) (dev, ino uint64, ok bool) {
	if st, isStat := info.Sys().(*syscall.Stat_t); isStat {
		return uint64(st.Dev), uint64(st.Ino), true
	}
	return 0, 0, false
}
