package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/courier-agent/courier/internal/procgroup"
)

// killGrace is how long a stopped agent gets between SIGTERM and SIGKILL
// to save its own state, and how long courier waits for its output pipes
// once it exited (only a process it left behind holds them open).
const killGrace = 2 * time.Second

// notFoundError is an agent program that is not installed: no restart can
// help.
type notFoundError struct {
	name string
	err  error
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("agent program %q not found: %v", e.name, e.err)
}
func (e *notFoundError) Unwrap() error   { return e.err }
func (e *notFoundError) permanent() bool { return true }

// exitStatus is how a program ended. A program killed by signal N has code
// 128+N, as shells and the agent protocol report it.
type exitStatus struct {
	code   int
	signal string // "SIGKILL"; "" when the program exited by itself
}

// statusOf reads the exit status of a program that ended.
func statusOf(err *exec.ExitError) exitStatus {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := procgroup.SignalName(ws.Signal())
		if name == "" {
			name = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
		return exitStatus{code: 128 + int(ws.Signal()), signal: name}
	}
	return exitStatus{code: err.ExitCode()}
}

// runProgram runs cmd, made with the context ctx, in a session of its own
// (no controlling terminal, so it cannot prompt on the person's terminal,
// and one process group, so it can be stopped with everything it started)
// and waits for it, ticking rep. When ctx is done the group gets SIGTERM,
// then its leader SIGKILL after killGrace; when the program exits,
// whatever it left running is killed. The status has code -1 when there
// is none; the error is non-nil when the program could not start, failed,
// or ctx ended it.
func runProgram(ctx context.Context, cmd *exec.Cmd, rep *reporter) (exitStatus, error) {
	none := exitStatus{code: -1}
	if err := ctx.Err(); err != nil {
		return none, fmt.Errorf("agent not started: %w", context.Cause(ctx))
	}
	cmd.SysProcAttr = procgroup.Attr()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
	if err := cmd.Start(); err != nil {
		return none, fmt.Errorf("start %s: %w", cmd.Args[0], err)
	}
	pgid := cmd.Process.Pid // Setsid makes it the leader of its group
	// An agent must not outlive its run, nor a panic in a callback.
	defer procgroup.Signal(pgid, syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	rep.processStarted(pgid)
	ticker := time.NewTicker(progressEvery)
	defer ticker.Stop()
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-ticker.C:
			rep.tick()
		}
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return none, fmt.Errorf("%s stopped: %w", filepath.Base(cmd.Args[0]), context.Cause(ctx))
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: the program succeeded, but something it started
		// held its output open; that process is killed on return.
		return exitStatus{}, nil
	case errors.As(err, &exitErr):
		return statusOf(exitErr), exitErr
	}
	return none, fmt.Errorf("wait for %s: %w", cmd.Args[0], err)
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
