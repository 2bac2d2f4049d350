package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/courier-agent/courier/internal/human"
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
