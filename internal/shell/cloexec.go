package shell

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec marks every descriptor of courier's from 3 up
// close-on-exec, through the list of its open descriptors in dir
// (/proc/self/fd or /dev/fd). Go opens its own so; one courier inherited
// without the mark from the program that started it (an editor, a shell
// script, a CI runner) would otherwise pass on to every command, where
// neither the command's environment nor the sandbox, which confines paths
// rather than descriptors already open, would keep it from being read or
// written.
func closeInheritedOnExec(dir string) {
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
