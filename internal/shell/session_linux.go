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
// process of its session, which has the shell's pid as its id.
func (p *process) signalSession(sig syscall.Signal) {
	p.signalGroup(sig)
	if sig != syscall.SIGKILL {
		for _, pid := range sessionMembers(p.pgid) {
			_ = syscall.Kill(pid, sig)
		}
		return
	}
	// A member may fork between the scan and the kill; sweep until none is
	// left alive, within a bound so a process stuck in the kernel cannot
	// hold Run.
	for range sessionSweeps {
		pids := sessionMembers(p.pgid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		time.Sleep(sessionSweepRest)
	}
}

// sessionMembers lists the processes of session sid that are not zombies.
func sessionMembers(sid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // the process ended meanwhile
		}
		if s, state, ok := parseStat(stat); ok && s == sid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
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
