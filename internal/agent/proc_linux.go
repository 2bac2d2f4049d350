//go:build linux

package agent

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// processStart returns the start time of process pid, in clock ticks
// since boot, from /proc/PID/stat (field 22): with the pid it names one
// process for good, as pids are reused.
func processStart(pid int) (uint64, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses,
	// so fields are counted from the last ')'; starttime is the 20th after
	// it.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, false
	}
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 20 {
		return 0, false
	}
	start, err := strconv.ParseUint(string(fields[19]), 10, 64)
	return start, err == nil
}

// stopLeftover kills the agent program a stopped courier left running,
// with its process group, if pid still names that very process.
func stopLeftover(pid int, start uint64) {
	if pid <= 0 || start == 0 {
		return
	}
	if now, ok := processStart(pid); !ok || now != start {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
