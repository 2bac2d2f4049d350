package shell

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// pipeSize is the room asked for in an output pipe. With the kernel's
// 64 KB, a command printing fast wakes courier for every few kilobytes;
// with more room each read takes more at once. Asking is best effort:
// /proc/sys/fs/pipe-max-size or a user's pipe quota may refuse it.
const pipeSize = 1 << 20

// widenPipe asks for pipeSize bytes of room in the pipe fd reads, and
// reports whether the pipe has that much.
func widenPipe(fd int) bool {
	size, err := unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, pipeSize)
	return err == nil && size >= pipeSize
}

// closeOnExecPipe makes a pipe whose ends a started command does not
// inherit unless handed them.
func closeOnExecPipe() (r, w int, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return 0, 0, err
	}
	return fds[0], fds[1], nil
}

// pause waits paceDelay without going through Go's scheduler: a timer
// (time.Sleep) or a blocking system call would cost a wakeup of the
// poller or of the runtime's monitor thread, the very cost pacing saves.
// The wait is short enough to hold the goroutine's thread as a brief
// computation would; a signal ends it early, which only shortens it.
func pause() {
	ts := unix.NsecToTimespec(int64(paceDelay))
	_, _, _ = unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}
