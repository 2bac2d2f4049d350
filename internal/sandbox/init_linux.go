package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// runInit starts the command and stays as the first process of its PID
// namespace: it reaps every orphan, passes termination signals on to every
// process of the namespace, and returns the command's status once the
// command (the shell) has ended. When the launcher then exits, the kernel
// kills whatever is left in the namespace, however it detached itself.
func runInit(argv, env []string) (int, error) {
	// Not dumpable: the command, running as the same user, cannot read
	// the launcher's memory or trace it.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("make the launcher private: %w", err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			// -1: every process of the namespace but the launcher.
			_ = syscall.Kill(-1, s.(syscall.Signal))
		}
	}()
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", argv[0], err)
	}
	for {
		var status syscall.WaitStatus
		got, err := syscall.Wait4(-1, &status, 0, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, fmt.Errorf("wait for %s: %w", argv[0], err)
		case got != pid:
			continue // an orphan reaped
		case status.Signaled():
			return 128 + int(status.Signal()), nil
		default:
			return status.ExitStatus(), nil
		}
	}
}
