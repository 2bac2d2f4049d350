package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// SystemError is the machine failing a file command's change (the disk
// full, an I/O error, a read-only file system), not the reply: the turn
// stops at that command, and its next run makes the change again.
type SystemError struct {
	Session string
	Index   int // the command whose change could not be made
	Path    string
	Err     error
}

func (e *SystemError) Error() string {
	return fmt.Sprintf("%s while writing '%s'", plainErr(e.Err), e.Path)
}

func (e *SystemError) Unwrap() error { return e.Err }

// isSystem reports whether a failure to change a file is the machine's.
func isSystem(err error) bool {
	is := func(errno syscall.Errno) bool { return errors.Is(err, errno) }
	return slices.ContainsFunc([]syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS, syscall.EFBIG}, is)
}

// plainErr words a file system error without its path (a temporary file,
// or the host's), which tells nothing but where courier's files are.
func plainErr(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	}
	return err.Error()
}
