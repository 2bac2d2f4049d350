//go:build linux

package agent

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// processStart returns the start time of process pid (field 22 of
// /proc/PID/stat): with the pid it names one process for good, as pids
// are reused. running says it has not ended (a zombie has).
func processStart(pid int) (start uint64, running bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	// comm may hold spaces and parentheses: fields count from the last ')'.
	if i := bytes.LastIndexByte(stat, ')'); err == nil && i >= 0 {
		if f := bytes.Fields(stat[i+1:]); len(f) >= 20 {
			start, err = strconv.ParseUint(string(f[19]), 10, 64)
			return start, err == nil && string(f[0]) != "Z"
		}
	}
	return 0, false
}

// stopLeftover kills, with its group, the agent program a stopped courier
// left running, if pid still names that very process, and waits a little
// for it to be gone. It reports whether the program was running.
func stopLeftover(pid int, start uint64) bool {
	running := func() bool { s, ok := processStart(pid); return ok && s == start }
	if pid <= 0 || start == 0 || !running() {
		return false
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); running() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
