package shell

import "golang.org/x/sys/unix"

// watchExit closes p.exited when the shell exits, without reaping it: while
// the shell is a zombie its pid stays taken, so signalling the group by that
// id after the shell ended cannot hit an unrelated process.
func (p *process) watchExit() {
	defer close(p.exited)
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// reap collects the exited shell's status into p.cmd.ProcessState.
func (p *process) reap() {
	_ = p.cmd.Wait() // the exit status is read from ProcessState
}
