package shell

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Killing the process group misses processes that moved to a group of their
// own (GNU timeout's child, set -m jobs) but stay in the session, so courier
// also signals the session members it finds in /proc.

const (
	sessionSweeps    = 20 // rescans for processes forked while being killed
	sessionSweepRest = 10 * time.Millisecond
)

// signalSession sends sig to the command's process group and to every live
// process of its session, which has the shell's pid as its id. A member may
// fork between scan and kill: SIGKILL sweeps until none is left, within a
// bound so that a process stuck in the kernel cannot hold Run.
func (p *process) signalSession(sig syscall.Signal) {
	p.signalGroup(sig)
	for range sessionSweeps {
		pids := sessionMembers(p.pgid)
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		if sig != syscall.SIGKILL || len(pids) == 0 {
			return
		}
		time.Sleep(sessionSweepRest)
	}
}

// sessionMembers lists the processes of session sid that are not zombies.
func sessionMembers(sid int) []int {
	var pids []int
	eachProcess("stat", func(pid int, stat []byte) {
		if s, state, ok := parseStat(stat); ok && s == sid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	})
	return pids
}

// eachProcess calls fn with each process's pid and its file /proc/PID/name.
func eachProcess(name string, fn func(pid int, data []byte)) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if data, err := os.ReadFile("/proc/" + e.Name() + "/" + name); err == nil { // else it ended meanwhile
			fn(pid, data)
		}
	}
}

// parseStat reads the session id and state from /proc/PID/stat:
// "pid (comm) state ppid pgrp session ...", where comm may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStat(stat []byte) (session int, state byte, ok bool) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 4 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	sid, err := strconv.Atoi(string(fields[3]))
	if err != nil {
		return 0, 0, false
	}
	return sid, fields[0][0], true
}
