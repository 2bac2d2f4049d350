package benchcmp

import (
	"os"
	"runtime/debug"
	"syscall"
)

// peakRSS is the most memory the ended program held resident, in bytes.
func peakRSS(ps *os.ProcessState) (int64, error) {
	return ps.SysUsage().(*syscall.Rusage).Maxrss << 10, nil // Linux counts KB
}

// forgetOwnPeak resets this process's peak to what it holds now, after
// giving back what it can. A child Go starts shares its parent's memory
// until it execs, and the kernel counts the parent's peak as the child's:
// left alone, the bench's own earlier peak would pass for courier's.
func forgetOwnPeak() error {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
