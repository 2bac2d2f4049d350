//go:build unix

// Package procgroup starts a program as the leader of a process group of
// its own and signals that whole group, so that whatever the program
// started ends with it.
package procgroup

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Attr starts a program in a session of its own: no controlling terminal,
// so it cannot prompt on the person's, and one process group whose id is
// the program's pid.
func Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// Signal sends sig to the process group pid leads; a group already gone
// is ESRCH.
func Signal(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// SignalName names a signal as shells do ("SIGKILL"), "" if unknown.
func SignalName(sig syscall.Signal) string { return unix.SignalName(sig) }
