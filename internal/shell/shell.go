// Package shell runs one RUN_COMMAND for courier: /bin/sh -c in the
// workspace, with no stdin, an allow-listed environment, a time limit that
// kills everything the command started, capped output, and optionally the
// sandbox (see package sandbox).
package shell

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/courier-agent/courier/internal/procgroup"
	"github.com/courier-agent/courier/internal/sandbox"
)

// TagVar is the variable that names a command in its environment. Every
// process the command starts inherits it, so a command left running by a
// courier that was killed can still be found and stopped.
const TagVar = "COURIER_COMMAND"

// DefaultMaxOutput is the output characters kept when Spec.MaxOutput is 0,
// as the protocol specifies; also max_output's default.
const DefaultMaxOutput = 4000

// Spec describes one command to run.
type Spec struct {
	Command   string            // shell text, run as `/bin/sh -c Command`
	Dir       string            // absolute working folder (the workspace root or a folder in it)
	Timeout   time.Duration     // whole-run limit; 0 means no limit
	MaxOutput int               // characters of output kept (DefaultMaxOutput if 0)
	Env       []string          // base environment (e.g. os.Environ()), of which the command gets the allow-listed variables (see Environ); nil is empty, not courier's
	ExtraEnv  map[string]string // set last (the command's own env)
	KeepEnv   []string          // names or globs of more variables of Env the command gets
	Sandbox   *sandbox.Options  // nil: no OS sandbox
	// Split keeps stdout and stderr apart (Result.Stdout, Result.Stderr,
	// each capped at MaxOutput) instead of interleaved in Output.
	Split bool
}

// Result is what a finished command left behind.
type Result struct {
	ExitCode  int           // -1 when killed by a signal, timed out or canceled
	Output    string        // stdout and stderr interleaved as they arrived, capped ("" with Split)
	Stdout    string        // with Split: stdout, capped
	Stderr    string        // with Split: stderr, capped
	TimedOut  bool          // the Timeout ran out and the command was killed
	Canceled  bool          // ctx was canceled and the command was killed
	Duration  time.Duration // from start until every process of the command was gone
	Truncated bool          // Output lost characters to the cap
	Sandboxed bool          // the sandbox launcher confined the command
	Limit     string        // the limit the command ran into: "processes", "memory" or ""
}

// Run runs spec.Command and waits for it, its time limit, or ctx. The
// command runs in a new session, with no controlling terminal. At the time
// limit or ctx's end everything in the session gets SIGTERM, then SIGKILL
// a second later; when the shell exits, whatever it left running is killed
// at once. A process that leaves the session (setsid) outside the
// sandbox's PID namespace escapes; Run then stops reading its output after
// a short grace. The error is non-nil only when the command did not start.
func Run(ctx context.Context, spec Spec) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("command not started: %w", err)
	}
	if !filepath.IsAbs(spec.Dir) {
		return Result{}, fmt.Errorf("working folder %q is not an absolute path", spec.Dir)
	}
	sh, err := shellPath()
	if err != nil {
		return Result{}, err
	}
	argv := []string{sh, "-c", spec.Command}
	launch := sandbox.Launch{Path: sh, Args: argv, Env: Environ(spec.Env, spec.KeepEnv, nil, spec.ExtraEnv), Attr: procgroup.Attr()}
	var cg *sandbox.Cgroup
	if spec.Sandbox != nil {
		o := spec.Sandbox.Probed()
		if err := sandbox.Check(o); err != nil {
			return Result{}, err
		}
		if o.Kernel.Unconfined == "" { // else it runs as it is
			if err := sandbox.Prepare(o); err != nil {
				return Result{}, err
			}
			cg = cgroup(&o)
			defer cg.Remove()
			// The tool variables point its builds at the session's caches.
			tools := sandbox.ToolEnv(o, lookup(Environ(spec.Env, spec.KeepEnv, nil, nil)))
			if launch, err = sandbox.Launcher(o, argv, Environ(spec.Env, spec.KeepEnv, tools, spec.ExtraEnv)); err != nil {
				return Result{}, err
			}
		}
	}
	maxOutput := cmp.Or(max(spec.MaxOutput, 0), DefaultMaxOutput)
	out, errOut := newCapture(maxOutput), newCapture(maxOutput)
	outs := []io.Writer{out}
	if spec.Split {
		outs = append(outs, errOut)
	}
	begin := time.Now()
	p, err := startProcess(launch, spec.Dir, outs...)
	if err != nil {
		return Result{}, err
	}
	res := p.wait(ctx, spec.Timeout)
	res.Duration, res.Truncated, res.Sandboxed, res.Limit = time.Since(begin), out.truncated(), launch.Confined, cg.Hit()
	if spec.Split {
		res.Stdout, res.Stderr = out.text(), errOut.text()
		res.Truncated = res.Truncated || errOut.truncated()
	} else {
		res.Output = out.text()
	}
	return res, nil
}

// cgroup makes the control group bounding a sandboxed command, when its
// limits ask for one and the kernel gives one (else the launcher sets
// resource limits).
func cgroup(opts *sandbox.Options) *sandbox.Cgroup {
	if opts == nil || !opts.Kernel.Cgroup || (opts.Limits.Processes <= 0 && opts.Limits.Memory <= 0) {
		return nil
	}
	cg, err := sandbox.NewCgroup(opts.Limits)
	if err != nil {
		return nil
	}
	opts.Limits.Cgroups = cg.Dirs()
	return cg
}
