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

// killGrace is how long a stopped agent gets between SIGTERM and SIGKILL,
// and how long courier waits for output pipes a leftover process holds.
const killGrace = 2 * time.Second

// notFoundError is an agent program that is not installed.
type notFoundError struct {
	name string
	err  error
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("agent program %q not found: %v", e.name, e.err)
}
func (e *notFoundError) Unwrap() error   { return e.err }
func (e *notFoundError) permanent() bool { return true }

// runProgram runs cmd in a session of its own (no terminal to prompt on,
// one process group to stop) and waits for it, ticking rep. When ctx is
// done the group gets SIGTERM, the leader SIGKILL after killGrace; what
// the program leaves running is killed. The outcome has hasExit when the
// program ended by itself; a signal N gives code 128+N.
func runProgram(ctx context.Context, cmd *exec.Cmd, rep *reporter) (outcome, error) {
	if err := ctx.Err(); err != nil {
		return outcome{}, fmt.Errorf("agent not started: %w", context.Cause(ctx))
	}
	cmd.SysProcAttr = procgroup.Attr()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
	if err := cmd.Start(); err != nil {
		return outcome{}, fmt.Errorf("start %s: %w", cmd.Args[0], err)
	}
	pgid := cmd.Process.Pid // Setsid makes it the leader of its group
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
		return outcome{}, fmt.Errorf("%s stopped: %w", filepath.Base(cmd.Args[0]), context.Cause(ctx))
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: it succeeded, but a process it started held its
		// output open.
		return outcome{hasExit: true}, nil
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			name := procgroup.SignalName(ws.Signal())
			if name == "" {
				name = fmt.Sprintf("signal %d", int(ws.Signal()))
			}
			return outcome{hasExit: true, exitCode: 128 + int(ws.Signal()), signal: name}, exitErr
		}
		return outcome{hasExit: true, exitCode: exitErr.ExitCode()}, exitErr
	}
	return outcome{}, fmt.Errorf("wait for %s: %w", cmd.Args[0], err)
}

// lookPath finds the program: a name with a slash is a path (from dir), a
// bare name is looked up in the agent's PATH, which may differ from
// courier's.
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
		// A relative entry would depend on the agent's folder; os/exec
		// refuses such matches too.
		if p := filepath.Join(d, name); filepath.IsAbs(d) && executable(p) == nil {
			return p, nil
		}
	}
	return "", &notFoundError{name: name, err: errors.New("not on PATH")}
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a folder", p)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}
