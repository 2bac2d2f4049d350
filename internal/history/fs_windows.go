package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// On Windows a folder is held open as an os.Root, reached one name at a
// time and only where Lstat finds no link (nor junction): a root itself
// never leaves the workspace.
type dirFD = *os.Root

// openRoot opens the workspace folder, following a link naming it: the person's choice.
func openRoot(dir string) (*os.Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return r, nil
}

// checked opens name with open unless Lstat finds a link there, or not a
// folder where one is wanted (Windows says "path not found" for that).
func checked[T any](d *os.Root, name string, folder bool, open func(string) (T, error)) (T, error) {
	info, err := d.Lstat(name)
	switch {
	case err != nil:
	case info.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0:
		err = &fs.PathError{Op: "open", Path: name, Err: syscall.ELOOP}
	case folder && !info.IsDir():
		err = &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	if err == nil {
		return open(name)
	}
	var none T
	return none, err
}

func openDir(d *os.Root, name string) (*os.Root, error) { return checked(d, name, true, d.OpenRoot) }

func openFileAt(d *os.Root, name string) (*os.File, error) { return checked(d, name, false, d.Open) }

// fill copies what an entry keeps of a FileInfo. Windows keeps a
// read-only flag, not a mode, no FIFOs or devices, no file number.
func fill(e *Entry, info fs.FileInfo, err error) error {
	if err != nil {
		return err
	}
	m := info.Mode()
	e.Size, e.Mode, e.Kind, e.Mtime = 0, uint32(m.Perm()), File, info.ModTime().UnixNano()
	e.Ctime = e.Mtime
	switch {
	case m&(fs.ModeSymlink|fs.ModeIrregular) != 0:
		e.Kind = Symlink
	case m.IsDir():
		e.Kind = Dir
	case m&fs.ModeSocket != 0:
		e.Kind = Socket
	default:
		e.Size = info.Size()
	}
	return nil
}

func lstatAt(d *os.Root, name string, e *Entry) error {
	info, err := d.Lstat(name)
	return fill(e, info, err)
}

func fileStat(f *os.File, e *Entry) error {
	info, err := f.Stat()
	return fill(e, info, err)
}

func readlinkAt(d *os.Root, name string) (string, error) { return d.Readlink(name) }

func dirFile(d *os.Root) (*os.File, error) { return d.Open(".") }

// chmodAt sets or clears the read-only flag (of a link itself).
func chmodAt(d *os.Root, name string, mode uint32) error {
	return d.Chmod(name, fs.FileMode(mode&0o777))
}

func fchmod(f *os.File, mode uint32) error { return f.Chmod(fs.FileMode(mode & 0o777)) }

func closeFD(d *os.Root) { d.Close() }

func unlinkAt(d *os.Root, name string) error { return d.Remove(name) }

// rmdirAt: a folder not empty is fs.ErrExist, as undo expects.
func rmdirAt(d *os.Root, name string) error { return d.Remove(name) }

func mkdirAt(d *os.Root, name string, mode uint32) error { return d.Mkdir(name, fs.FileMode(mode)) }

func symlinkAt(target string, d *os.Root, name string) error { return d.Symlink(target, name) }

func renameAt(d *os.Root, from, to string) error { return d.Rename(from, to) }

func createAt(d *os.Root, name string) (*os.File, error) {
	return d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

func mkfifoAt(*os.Root, string, uint32) error { return errors.ErrUnsupported }

// syncFS: Windows has no call that makes a whole file system durable;
// what undo wrote reaches the disk as the system writes it back.
func syncFS(...string) error { return nil }

// lockFile locks the byte after the holder record (others could not read
// the bytes a lock covers) without waiting: errBusy while another process
// holds a lock that excludes it.
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
