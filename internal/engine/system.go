package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// SystemError is a failure of the machine under a turn, not of the reply:
// the disk full or out of quota, an I/O error, a file system gone read
// only, while the change of a file command was made. The turn stops at
// that command: the commands before it are done and recorded, it and the
// ones after it are left for the next run of the turn, which makes the
// change again (it was journaled but not made) and goes on, so nothing is
// done twice or lost.
type SystemError struct {
	Session string
	// Index is the command whose change could not be made; Path its file.
	Index int
	Path  string
	Err   error
}

func (e *SystemError) Error() string {
	return fmt.Sprintf("%s while writing '%s'", plainErr(e.Err), e.Path)
}

func (e *SystemError) Unwrap() error { return e.Err }

// isSystem reports whether a failure to change a file is the machine's:
// the disk or quota full, an I/O error, a read-only file system, a file
// size limit.
func isSystem(err error) bool {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS, syscall.EFBIG} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// plainErr words a file system error without the path it carries: the
// path of a temporary file, or of the workspace on the host, means
// nothing to the LLM or a program and tells where courier's files are.
// The caller names the workspace path itself.
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
