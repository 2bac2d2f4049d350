//go:build unix

// Package inherit keeps the files courier was started with from passing on
// to the programs it starts. Go opens its own files close-on-exec; a file
// courier inherited without that mark from whatever started it (an editor,
// a shell script, a CI runner) would otherwise pass on to every program it
// starts: commands from a reply, agent programs, git, clipboard tools.
// Neither a program's environment nor the sandbox, which confines paths
// rather than files already open, would keep it from being read or
// written there.
package inherit

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeOnExecIn marks every descriptor from 3 up close-on-exec, through
// the list of the process's open descriptors in dir (/proc/self/fd or
// /dev/fd).
func closeOnExecIn(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			// The listing's own descriptor is closed by now: EBADF.
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
}
