package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/machine"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/shell"
	"github.com/courier-agent/courier/internal/workspace"
)

// maxReplyTimeout bounds the timeout a reply may ask for.
const maxReplyTimeout = command.Duration(time.Hour)

// runCommand carries out a RUN_COMMAND after the policy and, where needed,
// the person have allowed it.
func (r *turnRun) runCommand(ctx context.Context, i int, c command.Command) (command.Result, *history.Pending, error) {
	if c.Timeout > maxReplyTimeout {
		// Refused rather than stopped after the person waited an hour.
		return failed(c, "Not run: timeout=%q is longer than the %s a command may take; use at most timeout=\"1h\", or split the work into shorter commands", c.Timeout.String(), "1 hour"), nil, nil
	}
	v := policy.Verdict{Decision: policy.Allow}
	if r.opts.Policy != nil {
		v = r.opts.Policy.Check(c.Command).WithEnv(c.Env)
	}
	if v.Decision == policy.Ask && r.startsRepository(v) {
		v.Decision = policy.Allow
	}
	policyAsks := v.Decision == policy.Ask
	v = r.unconfined(v)
	// approved: the person let it run (the LLM is told); allLikeIt: an
	// earlier approval of all like it covers it; writesGit: it may write
	// .git (see gitWritable).
	approved, writesGit, allLikeIt := false, false, false
	switch v.Decision {
	case policy.Deny:
		res := result(c, command.Denied, "Not run: %s. Do the task without it, or ask the person to run it themselves (%s)", v.Reason, r.opts.Words.Name(command.Message))
		res.Cause, res.Reason = command.CausePolicy, v.Reason
		return res, nil, nil
	case policy.Ask:
		ok, byRule, res, pending := r.approval(i, c, v)
		if pending != nil || !ok {
			return res, pending, nil
		}
		approved, writesGit, allLikeIt = true, policyAsks && gitWritable(byRule, v), byRule
	}
	dir := r.ws.Dir()
	if c.Dir != "" {
		clean, err := workspace.Clean(c.Dir)
		if err != nil {
			return rejected(command.Command{Type: c.Type, Path: c.Dir}, err), nil, nil
		}
		info, err := r.ws.Stat(clean)
		if err != nil {
			if workspace.IsOutside(err) || workspace.IsProtected(err) {
				return rejected(command.Command{Type: c.Type, Path: c.Dir}, err), nil, nil
			}
			return failed(c, "Working folder '%s' not found", c.Dir), nil, nil
		}
		if !info.IsDir() {
			return failed(c, "Working folder '%s' is a file", c.Dir), nil, nil
		}
		dir = filepath.Join(dir, filepath.FromSlash(clean))
	}
	// What of the repositories can run a program: read-only to a command
	// that may not write them, and put back after it.
	var git *workspace.GitState
	if !writesGit {
		var err error
		if git, err = r.ws.Git(); err != nil {
			return command.Result{}, nil, err
		}
	}
	// Once allowed: never while a question is on the screen.
	r.opts.Observer.Started(i, c)
	if err := r.t.Before(nil); err != nil {
		return command.Result{}, nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := r.t.Append(history.Record{Kind: history.RecordStart, Index: i}); err != nil {
		return command.Result{}, nil, err
	}
	timeout := r.opts.Timeout
	if c.Timeout > 0 {
		timeout = time.Duration(c.Timeout)
	}
	env := map[string]string{}
	maps.Copy(env, c.Env)
	// courier's own variable last: a command's env cannot replace it.
	env[shell.TagVar] = commandTag(r.st, r.t.Sequence, i)
	out, err := shell.Run(ctx, shell.Spec{
		Command:   c.Command,
		Dir:       dir,
		Timeout:   timeout,
		MaxOutput: r.opts.MaxOutput,
		Env:       r.opts.Env,
		ExtraEnv:  env,
		KeepEnv:   r.opts.KeepEnv,
		Sandbox:   r.sandbox(r.st.SessionID, git),
		Split:     c.SplitOutput,
	})
	res := commandResult(c, out, err, timeout)
	if res.Status == command.Interrupted && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.Cause = command.CauseDeadline
		res.Summary = fmt.Sprintf("Command '%s' was stopped when the run's time ran out, after %s; it was not run again", human.FirstLine(c.Command, 0), out.Duration.Round(100*time.Millisecond))
	}
	switch {
	case allLikeIt:
		res.Summary += " (approved by the user, with all like it)"
	case approved:
		res.Summary += " (approved by the user)"
	}
	res.ApprovedAll = allLikeIt
	if git != nil {
		if err := r.putBackGit(i, git, &res); err != nil {
			return command.Result{}, nil, err
		}
	}
	if err := r.changed(i, nil, &res); err != nil {
		return command.Result{}, nil, err
	}
	return res, nil, nil
}

// gitWritable reports whether an approved command may write .git: the
// person said yes to this very command; or a rule covers it and every
// program it starts is git on PATH. A rule given for git's own writes
// must not lend .git to what else a later command does beside them
// (`git add x && echo ... >> .git/config`).
func gitWritable(byRule bool, v policy.Verdict) bool {
	notGit := func(p string) bool { return p != "git" }
	return !byRule || len(v.Programs) > 0 && !slices.ContainsFunc(v.Programs, notGit)
}

// putBackGit undoes what an unapproved command changed in the
// repositories that would make git run a program outside the sandbox (see
// workspace.PutBackGit), and tells the LLM and the person.
func (r *turnRun) putBackGit(i int, before *workspace.GitState, res *command.Result) error {
	done, err := r.ws.PutBackGit(before)
	if err != nil || len(done) == 0 {
		return err
	}
	what := strings.Join(done, "; ")
	res.Summary += fmt.Sprintf("; git would have run what it changed when the person uses the repository, so courier %s. Make a repository with plain 'git init', and change its settings with 'git config', which asks the person", what)
	r.out.Warnings = append(r.out.Warnings, fmt.Sprintf("command %d changed what git runs, so courier %s", i+1, what))
	return nil
}

// sandbox returns the OS sandbox for a command: the configured one, the
// workspace writable, and with git (nil when it may write them) every .git
// and what they lead to read-only.
func (e *Engine) sandbox(session string, git *workspace.GitState) *sandbox.Options {
	if e.opts.Sandbox == nil {
		return nil
	}
	sb := *e.opts.Sandbox
	sb.Writable = append([]string{e.ws.Dir()}, sb.Writable...)
	sb.Session = session
	if git != nil {
		sb.ReadOnly = append(slices.Clip(sb.ReadOnly), git.Paths(e.ws.Dir())...)
	}
	return &sb
}

// unconfined is the verdict on a command where nothing confines it (not
// on Linux): the person sees each one, and "all like it" covers none. A
// command the policy alone lets run still gets what it changed in .git
// put back (see gitWritable).
func (r *turnRun) unconfined(v policy.Verdict) policy.Verdict {
	if v.Decision == policy.Deny || r.opts.Sandbox == nil {
		return v
	}
	o := r.sandbox(r.st.SessionID, nil).Probed()
	why := o.Kernel.Unconfined
	if why == "" || sandbox.Check(o) != nil { // confined, or refused anyway
		return v
	}
	reason := why + `: each waits for your yes, unless sandbox = "off"`
	if v.Decision == policy.Ask {
		reason = v.Reason + "; and " + reason
	}
	return policy.Verdict{Decision: policy.Ask, Reason: reason, Programs: v.Programs, Shape: v.Shape}
}

// approval settles a command that needs the person's yes from the record
// and the approved rules: it may run, or its result, or the question to
// put (the runner records the answer and resumes).
func (r *turnRun) approval(i int, c command.Command, v policy.Verdict) (ok, byRule bool, res command.Result, pending *history.Pending) {
	if d, ok := r.decisions[i]; ok {
		if d.All {
			r.approveAll(v)
		}
		if !d.Approved {
			return false, false, r.deniedByPerson(c, d.Reason), nil
		}
		return true, false, command.Result{}, nil
	}
	if v.CoveredBy(r.approved) {
		return true, true, command.Result{}, nil
	}
	return false, false, command.Result{}, &history.Pending{Sequence: r.t.Sequence, Index: i, Command: c.Command, Env: strings.Join(policy.Assignments(c.Env), " "),
		Reason: v.ReasonAfter(r.approved), Rule: v.Rule, Covers: v.Covers()}
}

// approveAll remembers "approve all like it": each rule behind the
// verdict, with the command's shape.
func (r *turnRun) approveAll(v policy.Verdict) {
	for _, rule := range v.ApprovalKeys() {
		if !slices.Contains(r.approved, rule) {
			r.approved = append(r.approved, rule)
		}
	}
}

func (r *turnRun) deniedByPerson(c command.Command, reason string) command.Result {
	s := fmt.Sprintf("Not run: '%s' was denied by the user", human.FirstLine(c.Command, 0))
	if reason != "" {
		s += ": " + reason
	}
	res := result(c, command.Denied, "%s. Find another way, or explain in a %s why it is needed", s, r.opts.Words.Name(command.Message))
	res.Cause, res.Reason = command.CausePerson, reason
	return res
}

func commandResult(c command.Command, out shell.Result, err error, timeout time.Duration) command.Result {
	r := command.Result{Type: c.Type, Command: c.Command, Output: out.Output, Stdout: out.Stdout, Stderr: out.Stderr,
		TimedOut: out.TimedOut, DurationMS: out.Duration.Milliseconds()}
	name := human.FirstLine(c.Command, 0)
	switch {
	case err != nil:
		r.Status, r.Summary = command.Failed, fmt.Sprintf("Could not start '%s': %v", name, err)
	case out.Canceled:
		r.Status, r.Summary = command.Interrupted, fmt.Sprintf("Command '%s' was stopped by the person (Ctrl-C) after %s; it was not run again", name, out.Duration.Round(100*time.Millisecond))
	case out.TimedOut:
		r.Status, r.Summary = command.Failed, fmt.Sprintf("Command '%s' timed out after %s and was stopped, with every process it started", name, timeout)
	default:
		code := out.ExitCode
		r.ExitCode = &code
		r.Status, r.Summary = command.Failed, fmt.Sprintf("Ran '%s' (exit code %d)", name, code)
		if code == 0 {
			r.Status = command.OK
		}
	}
	r.Summary += map[string]string{
		"processes": "; it reached the limit of processes one command may have (the max_processes setting), so starting more failed",
		"memory":    "; it reached the memory one command may use (the max_memory setting), and a process was killed",
	}[out.Limit]
	return r
}

// Describe probes the machine as the session's commands see it.
func (e *Engine) Describe(ctx context.Context, session string) machine.Description {
	// An error leaves .git writable: the probe is courier's own.
	git, _ := e.ws.Git()
	spec := shell.Spec{Dir: e.ws.Dir(), Env: e.opts.Env, KeepEnv: e.opts.KeepEnv, Sandbox: e.sandbox(session, git)}
	noNet := e.opts.Sandbox != nil && e.opts.Sandbox.NoNetwork
	return machine.Probe(ctx, spec, machine.Limits{Timeout: e.opts.Timeout, MaxOutput: e.opts.MaxOutput, NoNetwork: noNet})
}

// startsRepository reports whether the only reason to ask is 'git init'
// in a workspace without .git, which harms nothing.
func (r *turnRun) startsRepository(v policy.Verdict) bool {
	if len(v.Rules) == 0 {
		return false
	}
	for _, rule := range v.Rules {
		if rule != "@git-write init" {
			return false
		}
	}
	_, err := r.ws.Stat(".git")
	return errors.Is(err, fs.ErrNotExist)
}
