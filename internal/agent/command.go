package agent

import (
	"context"
	"errors"
	"fmt"
	"github.com/courier-agent/courier/internal/human"
	"io"
	"os"
	"strings"
)

// stderrLimit caps what courier keeps of an agent's stderr: it is only
// for the person to read, and a runaway program must not fill the disk.
const stderrLimit = 4 << 20

// commandAgent runs a program that reads the request on stdin and writes
// the reply on stdout: the command backend and every preset.
type commandAgent struct {
	typ      string   // "command" or the preset's name
	argv     []string // never run through a shell
	modelID  string
	maxReply int64
	getenv   func(string) string
}

func (c *commandAgent) Type() string  { return c.typ }
func (c *commandAgent) model() string { return c.modelID }

// Execute runs the program once, as the protocol says.
func (c *commandAgent) Execute(ctx context.Context, runCtx *RunContext) error {
	_, err := execute(ctx, c, runCtx, nil)
	return err
}

func (c *commandAgent) run(ctx context.Context, runCtx *RunContext, rep *reporter) (outcome, error) {
	files, err := createOutputs(runCtx)
	if err != nil {
		return outcome{}, err
	}
	defer files.close()
	secrets := secretsOf(runCtx, c.getenv)

	progCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stdout := newRedactor(files.stdout, secrets)
	out := &meter{
		w: stdout, limit: c.maxReply,
		exceeded: func() { cancel(errReplyTooLarge) },
		onWrite:  rep.setBytes,
	}
	last := &tail{max: 4096}
	stderr := newRedactor(io.MultiWriter(files.stderr, last), secrets)
	errOut := &meter{w: stderr, limit: stderrLimit, drop: true}

	status, runErr := runProgram(progCtx, program{
		argv:    c.argv,
		dir:     runCtx.WorkingDir,
		env:     mergeEnvironment(os.Environ(), runCtx.Environment),
		stdin:   strings.NewReader(runCtx.Prompt),
		stdout:  out,
		stderr:  errOut,
		started: rep.processStarted,
		tick:    rep.tick,
	})
	// What the redactors held back belongs to the files before they are
	// synced; a write error here only loses the tail of the output.
	_ = stdout.Close()
	_ = stderr.Close()
	rep.flush()
	o := outcome{exitCode: status.code, signal: status.signal, hasExit: runErr == nil || isExit(runErr)}
	if errors.Is(context.Cause(progCtx), errReplyTooLarge) && ctx.Err() == nil {
		return o, fmt.Errorf("the reply of %s passed %s; courier stopped it", c.typ, human.ExactBytes(c.maxReply))
	}
	if runErr != nil {
		if isExit(runErr) {
			return o, &ExitError{Agent: c.typ, Code: status.code, Signal: status.signal, Detail: lastLine(last.String()), Err: runErr}
		}
		return o, runErr
	}
	if err := files.sync(); err != nil {
		return o, err
	}
	return o, nil
}

func isExit(err error) bool {
	var ee interface{ ExitCode() int }
	return errors.As(err, &ee)
}

// outputs are a run's stdout and stderr files.
type outputs struct{ stdout, stderr *os.File }

// createOutputs creates (or empties) the two files the protocol names.
func createOutputs(runCtx *RunContext) (*outputs, error) {
	stdout, err := os.OpenFile(runCtx.StdoutPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create stdout file: %w", err)
	}
	stderr, err := os.OpenFile(runCtx.StderrPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		stdout.Close()
		return nil, fmt.Errorf("create stderr file: %w", err)
	}
	return &outputs{stdout: stdout, stderr: stderr}, nil
}

// sync makes the reply durable before its run is marked completed.
func (o *outputs) sync() error {
	if err := o.stdout.Sync(); err != nil {
		return fmt.Errorf("save the reply: %w", err)
	}
	return nil
}

func (o *outputs) close() {
	o.stdout.Close()
	o.stderr.Close()
}
