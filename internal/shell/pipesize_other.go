//go:build !linux

package shell

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// widenPipe does nothing where the pipe's room cannot be set, and reports
// that the pipe keeps its room (so that reads are not paced).
func widenPipe(int) bool { return false }

// closeOnExecPipe makes a pipe whose ends a started command does not
// inherit unless handed them. Without pipe2, the ends are marked while
// no process is being started.
func closeOnExecPipe() (r, w int, err error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		return 0, 0, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return fds[0], fds[1], nil
}

// pause is never called where pipes are not widened.
func pause() {}
