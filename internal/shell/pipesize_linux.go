package shell

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the room asked for in an output pipe. With the kernel's
// 64 KB, a command printing fast wakes courier for every few kilobytes;
// with more room each read takes more at once. Asking is best effort:
// /proc/sys/fs/pipe-max-size or a user's pipe quota may refuse it.
const pipeSize = 1 << 20

// widenPipe asks for pipeSize bytes of room in the pipe r reads.
func widenPipe(r *os.File) {
	// Through SyscallConn, not Fd, which would take r out of the poller.
	if c, err := r.SyscallConn(); err == nil {
		_ = c.Control(func(fd uintptr) {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
		})
	}
}
