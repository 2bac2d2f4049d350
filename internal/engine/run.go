package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/shell"
	"github.com/courier-agent/courier/internal/workspace"
)

// Answer is the person's decision on a command that needs approval.
type Answer int

// The answers an Approver can give.
const (
	// Wait leaves the question open: the turn pauses until 'courier approve'
	// or 'courier deny' answers it.
	Wait Answer = iota
	Approve
	// ApproveAll approves this command and every later one like it in the
	// session.
	ApproveAll
	Reject
)

// Approver asks the person about a command the policy will not run alone.
type Approver interface {
	Approve(ctx context.Context, c command.Command, v policy.Verdict) (Answer, string, error)
}

// runCommand carries out a RUN_COMMAND after the policy and, where needed,
// the person have allowed it.
func (r *turnRun) runCommand(ctx context.Context, i int, c command.Command) (command.Result, *session.Pending, error) {
	v := policy.Verdict{Decision: policy.Allow}
	if r.opts.Policy != nil {
		v = r.opts.Policy.Check(c.Command)
	}
	approved := false
	switch v.Decision {
	case policy.Deny:
		return denied(c, fmt.Sprintf("Not run: %s. Do the task without it, or ask the person to run it themselves (MESSAGE)", v.Reason)), nil, nil
	case policy.Ask:
		ok, res, pending, err := r.approval(ctx, i, c, v)
		if err != nil || pending != nil || !ok {
			return res, pending, err
		}
		approved = true
	}
	dir := r.ws.Dir()
	if c.Dir != "" {
		clean, err := workspace.Clean(c.Dir)
		if err != nil {
			return rejected(command.Command{Type: c.Type, Path: c.Dir}, err), nil, nil
		}
		info, err := r.ws.Stat(clean)
		if err != nil {
			if workspace.IsOutside(err) {
				return rejected(command.Command{Type: c.Type, Path: c.Dir}, err), nil, nil
			}
			return failed(c, "Working folder '%s' not found", c.Dir), nil, nil
		}
		if !info.IsDir() {
			return failed(c, "Working folder '%s' is a file", c.Dir), nil, nil
		}
		dir = filepath.Join(dir, filepath.FromSlash(clean))
	}
	if err := r.t.Append(session.Record{Kind: session.Start, Index: i}); err != nil {
		return command.Result{}, nil, err
	}
	timeout := r.opts.CommandTimeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	env := map[string]string{shell.TagVar: commandTag(r.st, r.t.Sequence, i)}
	for k, v := range c.Env {
		env[k] = v
	}
	out, err := shell.Run(ctx, shell.Spec{
		Command:   c.Command,
		Dir:       dir,
		Timeout:   timeout,
		MaxOutput: r.opts.MaxOutput,
		Env:       r.opts.Env,
		ExtraEnv:  env,
		KeepEnv:   r.opts.KeepEnv,
		Sandbox:   r.sandbox(approved),
	})
	return commandResult(c, out, err, timeout), nil, nil
}

// sandbox returns the OS sandbox for a command: the configured one, with
// the workspace writable, the session's temporary folder, and the
// workspace's .git read-only unless the person approved this very command
// (git commit, git checkout and the like ask first for that reason).
func (r *turnRun) sandbox(approved bool) *sandbox.Options {
	if r.opts.Sandbox == nil {
		return nil
	}
	sb := *r.opts.Sandbox
	sb.Writable = append([]string{r.ws.Dir()}, sb.Writable...)
	sb.Session = r.st.SessionID
	if !approved {
		sb.ReadOnly = append(slices.Clip(sb.ReadOnly), sandbox.GitPaths(r.ws.Dir())...)
	}
	return &sb
}

// approval settles a command that needs the person's yes. It reports
// whether the command may run, or else its result or the pending question.
func (r *turnRun) approval(ctx context.Context, i int, c command.Command, v policy.Verdict) (bool, command.Result, *session.Pending, error) {
	if d, ok := r.js.decisions[i]; ok {
		if d.All {
			approveAll(r.st, v)
		}
		if !d.Approved {
			return false, deniedByPerson(c, d.Reason), nil, nil
		}
		return true, command.Result{}, nil, nil
	}
	if v.CoveredBy(r.st.ApprovedRules) {
		return true, command.Result{}, nil, nil
	}
	pending := &session.Pending{Sequence: r.t.Sequence, Index: i, Command: c.Command, Reason: v.Reason, Rule: v.Rule}
	if r.opts.Approver == nil {
		return false, command.Result{}, pending, nil
	}
	ans, reason, err := r.opts.Approver.Approve(ctx, c, v)
	if err != nil {
		return false, command.Result{}, nil, err
	}
	if ans == Wait {
		return false, command.Result{}, pending, nil
	}
	rec := session.Record{Kind: session.Decision, Index: i, Approved: ans != Reject, All: ans == ApproveAll, Reason: reason}
	if err := r.t.Append(rec); err != nil {
		return false, command.Result{}, nil, err
	}
	r.js.decisions[i] = rec
	if rec.All {
		approveAll(r.st, v)
	}
	if !rec.Approved {
		return false, deniedByPerson(c, reason), nil, nil
	}
	return true, command.Result{}, nil, nil
}

// approveAll remembers "approve all like it": each rule behind the verdict
// on its own, so later commands doing part of the same are covered too.
func approveAll(st *session.State, v policy.Verdict) {
	for _, r := range v.Rules {
		if !slices.Contains(st.ApprovedRules, r) {
			st.ApprovedRules = append(st.ApprovedRules, r)
		}
	}
}

func denied(c command.Command, summary string) command.Result {
	return command.Result{Type: c.Type, Status: command.Denied, Command: c.Command, Summary: summary}
}

func deniedByPerson(c command.Command, reason string) command.Result {
	s := fmt.Sprintf("Not run: the person denied '%s'", firstLine(c.Command))
	if reason != "" {
		s += ": " + reason
	}
	return denied(c, s+". Find another way, or explain in a MESSAGE why it is needed")
}

// commandResult turns a finished command into the result the LLM reads.
func commandResult(c command.Command, out shell.Result, err error, timeout time.Duration) command.Result {
	r := command.Result{Type: c.Type, Command: c.Command, Output: out.Output, DurationMS: out.Duration.Milliseconds()}
	name := firstLine(c.Command)
	switch {
	case err != nil:
		r.Status = command.Failed
		r.Summary = fmt.Sprintf("Could not start '%s': %v", name, err)
	case out.Canceled:
		r.Status = command.Interrupted
		r.Summary = fmt.Sprintf("Command '%s' was stopped by the person (Ctrl-C) after %s; it was not run again", name, out.Duration.Round(100*time.Millisecond))
	case out.TimedOut:
		r.Status = command.Failed
		r.Summary = fmt.Sprintf("Command '%s' timed out after %s and was stopped, with every process it started", name, timeout)
	default:
		code := out.ExitCode
		r.ExitCode = &code
		if code == 0 {
			r.Status = command.OK
			r.Summary = fmt.Sprintf("Ran '%s' (exit code 0)", name)
		} else {
			r.Status = command.Failed
			r.Summary = fmt.Sprintf("Ran '%s' (exit code %d)", name, code)
		}
	}
	return r
}
