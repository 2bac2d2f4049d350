package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// killGrace is how long a canceled agent gets between SIGTERM and
	// SIGKILL, to save its own state.
	killGrace = 2 * time.Second
	// drainGrace bounds the wait for the output pipes after the agent
	// exited: only a process it left behind can hold them open, and that
	// process is killed right after.
	drainGrace = time.Second
)

// program is one start of an agent program.
type program struct {
	argv   []string // argv[0] as configured: a path, or a name looked up in the PATH of env
	dir    string
	env    []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// started learns the pid once the program runs.
	started func(pid int)
	// tick is called every progressEvery while the program runs, on the
	// calling goroutine.
	tick func()
}

// notFoundError is an agent program that is not installed: no restart can
// help, so it is permanent.
type notFoundError struct {
	name string
	err  error
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("agent program %q not found: %v", e.name, e.err)
}
func (e *notFoundError) Unwrap() error   { return e.err }
func (e *notFoundError) permanent() bool { return true }

// exitStatus is how a program ended: its exit code, and the signal that
// killed it, if one did. A program killed by signal N has code 128+N, as
// shells and the agent protocol report it.
type exitStatus struct {
	code   int
	signal string // "SIGKILL"; "" when the program exited by itself
}

// statusOf reads the exit status of a program that ended.
func statusOf(err *exec.ExitError) exitStatus {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitStatus{code: 128 + int(ws.Signal()), signal: signalName(ws.Signal())}
	}
	return exitStatus{code: err.ExitCode()}
}

// signalName names a signal as people write it: SIGKILL, SIGSEGV.
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// runProgram runs p in a session of its own (no controlling terminal, so
// it cannot prompt on the person's terminal, and one process group, so it
// can be stopped with everything it started) and waits for it. When ctx is
// done the group gets SIGTERM, then SIGKILL after killGrace; when the
// program exits, whatever it left running is killed. The result is the
// exit status (code -1 when there is none); the error is non-nil when the
// program could not start, failed, or ctx ended it.
func runProgram(ctx context.Context, p program) (exitStatus, error) {
	none := exitStatus{code: -1}
	path, err := lookPath(p.argv[0], p.dir, p.env)
	if err != nil {
		return none, err
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        p.argv,
		Dir:         p.dir,
		Env:         p.env,
		Stdin:       p.stdin,
		Stdout:      p.stdout,
		Stderr:      p.stderr,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
		WaitDelay:   drainGrace,
	}
	if err := ctx.Err(); err != nil {
		return none, fmt.Errorf("agent not started: %w", context.Cause(ctx))
	}
	if err := cmd.Start(); err != nil {
		return none, fmt.Errorf("start %s: %w", p.argv[0], err)
	}
	pgid := cmd.Process.Pid // Setsid makes it the leader of its group
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	finished := false
	defer func() {
		if !finished {
			// A panic in a callback is on its way up: the program must
			// not outlive it.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
	}()
	if p.started != nil {
		p.started(pgid)
	}

	var waitErr error
	canceled := false
	ticker := time.NewTicker(progressEvery)
	defer ticker.Stop()
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case <-ctx.Done():
			canceled = true
			waitErr = stopGroup(pgid, done)
			break wait
		case <-ticker.C:
			if p.tick != nil {
				p.tick()
			}
		}
	}
	finished = true
	// Whatever the program left behind dies with it: an agent must not
	// outlive its run.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if canceled {
		return none, fmt.Errorf("%s stopped: %w", filepath.Base(p.argv[0]), context.Cause(ctx))
	}
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil, errors.Is(waitErr, exec.ErrWaitDelay):
		// ErrWaitDelay: the program succeeded, but something it started
		// held its output open; that process is killed above.
		return exitStatus{}, nil
	case errors.As(waitErr, &exitErr):
		return statusOf(exitErr), exitErr
	}
	return none, fmt.Errorf("wait for %s: %w", p.argv[0], waitErr)
}

// stopGroup ends a running program group: SIGTERM, then SIGKILL after
// killGrace unless the program exited; it returns the program's wait
// result.
func stopGroup(pgid int, done <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	grace := time.NewTimer(killGrace)
	defer grace.Stop()
	select {
	case err := <-done:
		return err
	case <-grace.C:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return <-done
}

// lookPath finds the program: a name with a slash is a path (relative
// ones from dir, as os/exec runs them), a bare name is looked up in the
// PATH the agent's environment holds, which may differ from courier's.
func lookPath(name, dir string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", &notFoundError{name: name, err: err}
		}
		return p, nil
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			// A relative PATH entry would depend on the folder the agent
			// runs in; os/exec refuses such matches too.
			continue
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", &notFoundError{name: name, err: errors.New("not on PATH")}
}

// executable reports whether p is a file courier may execute.
func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a folder", p)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}
