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

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/procgroup"
)

// stderrLimit caps what courier keeps of an agent's stderr, only for the
// person to read.
const stderrLimit = 4 << 20

// runCommand runs the program, request on stdin, reply on stdout.
func (c *backend) runCommand(ctx context.Context, runCtx *RunContext, rep *reporter) (outcome, error) {
	stdoutFile, stderrFile, err := createOutputs(runCtx)
	if err != nil {
		return outcome{}, err
	}
	defer stdoutFile.Close()
	defer stderrFile.Close()
	secrets := secretsOf(runCtx, c.Getenv)
	env := mergeEnvironment(os.Environ(), runCtx.Environment)
	path, err := lookPath(c.argv[0], runCtx.WorkingDir, env)
	if err != nil {
		return outcome{}, err
	}

	progCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stdout := newRedactor(stdoutFile, secrets)
	stderr := newRedactor(stderrFile, secrets)
	cmd := exec.CommandContext(progCtx, path)
	cmd.Args, cmd.Dir, cmd.Env, cmd.Stdin = c.argv, runCtx.WorkingDir, env, strings.NewReader(runCtx.Prompt)
	cmd.Stdout = &meter{w: stdout, limit: c.MaxReply, exceeded: func() { cancel(errReplyTooLarge) }, onWrite: rep.setBytes}
	cmd.Stderr = &meter{w: stderr, limit: stderrLimit, drop: true}
	o, runErr := runProgram(progCtx, cmd, rep)
	// What the redactors held back goes into the files before the sync.
	_ = stdout.Close()
	_ = stderr.Close()
	rep.flush()
	var exitErr *exec.ExitError
	switch {
	case errors.Is(context.Cause(progCtx), errReplyTooLarge) && ctx.Err() == nil:
		return o, fmt.Errorf("the reply of %s passed %s; courier stopped it", c.typ, human.ExactBytes(c.MaxReply))
	case errors.As(runErr, &exitErr):
		last, _ := os.ReadFile(runCtx.StderrPath)
		return o, &ExitError{Agent: c.typ, Code: o.exitCode, Signal: o.signal, Detail: lastLine(string(last)), Err: runErr}
	case runErr != nil:
		return o, runErr
	}
	return o, syncReply(stdoutFile)
}

func createOutputs(runCtx *RunContext) (stdout, stderr *os.File, err error) {
	stdout, err = os.OpenFile(runCtx.StdoutPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("create stdout file: %w", err)
	}
	stderr, err = os.OpenFile(runCtx.StderrPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		stdout.Close()
		return nil, nil, fmt.Errorf("create stderr file: %w", err)
	}
	return stdout, stderr, nil
}

// syncReply makes the reply durable before its run is marked completed.
func syncReply(f *os.File) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("save the reply: %w", err)
	}
	return nil
}

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
