package inherit

import (
	"math"

	"golang.org/x/sys/unix"
)

// Seal marks every descriptor of the process from 3 up close-on-exec: in
// one system call where the kernel has close_range (5.11), through
// /proc/self/fd otherwise. Descriptors opened after it are Go's, marked
// already; it is cheap enough to call again before starting a program, for
// code that may run in a process that did not call it first.
func Seal() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) != nil {
		closeOnExecIn("/proc/self/fd")
	}
}
