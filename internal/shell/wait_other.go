//go:build !linux

package shell

import "syscall"

// watchExit closes p.exited when the shell exits. Without waitid's WNOWAIT
// the shell is reaped here, so the later group kill has a tiny window in
// which the group id could have been reused.
func (p *process) watchExit() {
	defer close(p.exited)
	_ = p.cmd.Wait() // the exit status is read from ProcessState
}

// reap waits for watchExit, which already reaped the shell.
func (p *process) reap() {
	<-p.exited
}

// signalSession signals the command's process group; other systems have no
// /proc to find session members that moved to another group.
func (p *process) signalSession(sig syscall.Signal) {
	p.signalGroup(sig)
}
