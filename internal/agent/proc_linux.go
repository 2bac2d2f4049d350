//go:build linux

package agent

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// leftoverWait bounds the wait for a killed leftover program to be gone.
const leftoverWait = 5 * time.Second

// processStart returns the start time of process pid, in clock ticks
// since boot, from /proc/PID/stat (field 22): with the pid it names one
// process for good, as pids are reused.
func processStart(pid int) (uint64, bool) {
	start, _, ok := processStat(pid)
	return start, ok
}

// processStat returns the start time and the state (R, S, Z...) of
// process pid.
func processStat(pid int) (uint64, byte, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses,
	// so fields are counted from the last ')'; state is the first after
	// it, starttime the 20th.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 20 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	start, err := strconv.ParseUint(string(fields[19]), 10, 64)
	return start, fields[0][0], err == nil
}

// running reports whether the process pid that started at start still
// runs (a zombie has ended).
func running(pid int, start uint64) bool {
	now, state, ok := processStat(pid)
	return ok && now == start && state != 'Z'
}

// stopLeftover kills the agent program a stopped courier left running,
// with its process group, if pid still names that very process, and waits
// a little for it to be gone. It reports whether the program was running.
func stopLeftover(pid int, start uint64) bool {
	if pid <= 0 || start == 0 || !running(pid, start) {
		return false
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(leftoverWait)
	for running(pid, start) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
