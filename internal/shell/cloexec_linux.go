package shell

import (
	"math"

	"golang.org/x/sys/unix"
)

// markInheritedFiles keeps courier's inherited descriptors from its
// commands (see closeInheritedOnExec): in one system call where the
// kernel has close_range (5.11), through /proc/self/fd otherwise.
func markInheritedFiles() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) != nil {
		closeInheritedOnExec("/proc/self/fd")
	}
}
