package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// On Windows a descriptor is a handle, opened without following a
// reparse point (a symlink or a junction), and a name in a folder is
// reached through the folder's path as its handle finds it now.

const (
	dirFlags  = 1
	fileFlags = 0
)

// errNotDir: a folder was wanted (ENOTDIR is "path not found" here).
var errNotDir = errors.New("not a folder")

func notFolder(err error) bool { return errors.Is(err, syscall.ELOOP) || errors.Is(err, errNotDir) }

// openRoot opens the workspace folder itself (a link naming it is the
// person's choice and is followed, as os.OpenRoot does).
func openRoot(dir string) (int, error) {
	h, err := openHandle(dir, windows.GENERIC_READ, 0)
	if err != nil {
		return -1, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return int(h), nil
}

func openHandle(p string, access, flags uint32) (windows.Handle, error) {
	p16, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return windows.InvalidHandle, err
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	return windows.CreateFile(p16, access, share, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|flags, 0)
}

// pathOf is the path of what the handle fd holds open.
func pathOf(fd int) (string, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(windows.Handle(fd), &buf[0], uint32(len(buf)), 0)
	return windows.UTF16ToString(buf[:min(int(n), len(buf))]), err
}

// pathAt is the path of name in the folder dirfd; name is one element.
func pathAt(dirfd int, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\:`) {
		return "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	dir, err := pathOf(dirfd)
	return dir + `\` + name, err
}

// openAt opens name in dirfd, never through a reparse point: a folder
// with dirFlags, anything else with fileFlags.
func openAt(dirfd int, name string, flags int) (int, error) {
	p, err := pathAt(dirfd, name)
	if err != nil {
		return -1, err
	}
	h, err := openHandle(p, windows.GENERIC_READ, windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var e Entry
	if err = fstat(int(h), &e); err == nil && e.Kind == Symlink {
		err = syscall.ELOOP
	} else if err == nil && flags == dirFlags && e.Kind != Dir {
		err = errNotDir
	}
	if err != nil {
		windows.CloseHandle(h)
		return -1, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return int(h), nil
}

func lstatAt(dirfd int, name string, e *Entry) error {
	return at(dirfd, name, func(p string) error {
		h, err := openHandle(p, windows.FILE_READ_ATTRIBUTES, windows.FILE_FLAG_OPEN_REPARSE_POINT)
		if err != nil {
			return err
		}
		defer windows.CloseHandle(h)
		return fstat(int(h), e)
	})
}

// fstat fills e from what the handle fd holds. Windows keeps a read-only
// flag, not a mode: writable files are 0o666, folders 0o777.
func fstat(fd int, e *Entry) error {
	var st windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(fd), &st); err != nil {
		return err
	}
	e.Size = int64(st.FileSizeHigh)<<32 | int64(st.FileSizeLow)
	e.Mtime = st.LastWriteTime.Nanoseconds()
	e.Ctime = e.Mtime
	e.Ino, e.Dev = uint64(st.FileIndexHigh)<<32|uint64(st.FileIndexLow), uint64(st.VolumeSerialNumber)
	e.Kind, e.Mode = File, 0o666
	switch {
	case st.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		e.Kind, e.Size = Symlink, 0
	case st.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		e.Kind, e.Size, e.Mode = Dir, 0, 0o777
	}
	if st.FileAttributes&windows.FILE_ATTRIBUTE_READONLY != 0 {
		e.Mode &^= 0o222
	}
	return nil
}

func readlinkAt(dirfd int, name string) (target string, err error) {
	err = at(dirfd, name, func(p string) (err error) { target, err = os.Readlink(p); return err })
	return target, err
}

// dirFile is the folder open as fd, to be listed.
func dirFile(fd int) (*os.File, error) {
	p, err := pathOf(fd)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// chmodAt sets or clears the read-only flag of name in folder fd.
func chmodAt(fd int, name string, mode uint32) error {
	return at(fd, name, func(p string) error { return os.Chmod(p, fs.FileMode(mode&0o777)) })
}

func fchmod(fd int, mode uint32) error {
	p, err := pathOf(fd)
	if err != nil {
		return err
	}
	return os.Chmod(p, fs.FileMode(mode&0o777))
}

func closeFD(fd int) { windows.CloseHandle(windows.Handle(fd)) }

// at runs op on the path of name in folder fd.
func at(fd int, name string, op func(p string) error) error {
	p, err := pathAt(fd, name)
	if err != nil {
		return err
	}
	return op(p)
}

func unlinkAt(fd int, name string) error { return at(fd, name, os.Remove) }

// rmdirAt: a folder not empty is fs.ErrExist, as undo expects.
func rmdirAt(fd int, name string) error { return at(fd, name, os.Remove) }

func mkdirAt(fd int, name string, mode uint32) error {
	return at(fd, name, func(p string) error { return os.Mkdir(p, fs.FileMode(mode)) })
}

func symlinkAt(target string, fd int, name string) error {
	return at(fd, name, func(p string) error { return os.Symlink(target, p) })
}

func renameAt(fd int, from, to string) error {
	return at(fd, to, func(dst string) error {
		return at(fd, from, func(src string) error { return os.Rename(src, dst) })
	})
}

// createAt makes the new file name in folder fd, for writing.
func createAt(fd int, name string) (f *os.File, err error) {
	err = at(fd, name, func(p string) error {
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, err
}

// mkfifoAt: there are no FIFOs here; undo says so.
func mkfifoAt(int, string, uint32) error { return errors.ErrUnsupported }

// syncFS: Windows has no call that makes a whole file system durable;
// what undo wrote reaches the disk as the system writes it back.
func syncFS(...string) error { return nil }

// lockFile takes a LockFileEx lock on f, exclusive or shared, without
// waiting: errBusy while another process holds one that excludes it. It
// locks the byte after the holder record: others could not read the
// bytes a lock covers.
func lockFile(f *os.File, exclusive bool) error {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &windows.Overlapped{Offset: holderSize})
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errBusy
	}
	return err
}

func unlockFile(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &windows.Overlapped{Offset: holderSize})
}

// processAlive reports whether the process pid runs (or cannot be told).
func processAlive(pid int) bool {
	const stillActive = 259
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return !errors.Is(err, windows.ERROR_INVALID_PARAMETER) // no such process
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) != nil || code == stillActive
}
