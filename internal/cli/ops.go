package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/serve"
)

// exitStatus ends courier with a status and nothing on stderr: the
// command said all on stdout ('courier ops' prints its events message).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

type opsOptions struct {
	g            *globals
	ctx          context.Context
	file, preset string
}

func newOpsCmd(g *globals, runF func(*opsOptions) error) *cobra.Command {
	o := &opsOptions{g: g}
	cmd := &cobra.Command{
		Use:   "ops [FILE|-]",
		Short: "Carry out an Agent Spaces operations message and print its events",
		Long: `Read an operations message of the Agent Spaces protocol
({"protocolVersion": "1.0", "operations": [...]}) from FILE, or from stdin
with - or no argument, carry it out in the workspace as a run (journaled,
sandboxed, undoable like any turn), and print the events message on stdout.

Exit status: 0 when the run's status is "completed", 3 when it is
"awaiting_approval" (answer with 'courier ops resume'), 1 for "error".
Progress and warnings go to stderr.`,
		Example: `  courier ops ops.json
  echo '{"protocolVersion":"1.0","operations":[{"type":"shell","id":"s1","command":"go test ./..."}]}' | courier ops
  courier ops --policy restrictive - < ops.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.file, &o.ctx, runF, opsRun),
	}
	cmd.Flags().StringVar(&o.preset, "policy", "", "the policy preset the run's shell operations are checked by, over your own [policy] rules: standard (your policy as it is, the default), permissive or restrictive")
	_ = cmd.RegisterFlagCompletionFunc("policy", cobra.FixedCompletions([]string{agentspaces.PresetStandard, agentspaces.PresetPermissive, agentspaces.PresetRestrictive}, cobra.ShellCompDirectiveNoFileComp))
	cmd.AddCommand(newOpsResumeCmd(g, nil))
	return cmd
}

func opsRun(o *opsOptions) error {
	if _, err := agentspaces.Preset(o.preset, policy.Config{}); err != nil {
		return usage(withHint(err, "--policy standard, permissive or restrictive"))
	}
	name, data, err := o.g.readOps(o.file)
	if err != nil {
		return err
	}
	cmds, err := agentspaces.Decode(data)
	if err != nil {
		// Not a message that can run: no run is made.
		return o.g.printEvents(agentspaces.Events(runner.NewID(), agentspaces.Outcome{Err: err}, time.Now()))
	}
	b, err := o.g.runner(view{use: starting, program: true})
	if err != nil {
		return err
	}
	rep, err := b.StartRun(o.ctx, cmds, runner.RunOptions{
		Protocol: agentspaces.ChatName, Preset: o.preset, Name: name, Hash: history.Hash(string(data)),
		Task: serve.RunTask(cmds),
	})
	if err != nil && rep.Commands == nil {
		// A program reads the answer as events, even when courier
		// could not begin the run (a full disk).
		rep.Commands = cmds
	}
	return o.g.runEvents(rep, err)
}

type resumeOptions struct {
	g                         *globals
	ctx                       context.Context
	id, approve, deny, reason string
	stdin                     bool // the answer comes on stdin
}

func newOpsResumeCmd(g *globals, runF func(*resumeOptions) error) *cobra.Command {
	o := &resumeOptions{g: g}
	cmd := &cobra.Command{
		Use:   "resume RUN_ID [-]",
		Short: "Answer the approval a paused run waits on, or finish a run that was stopped",
		Long: `Answer the approvalRequired event of a paused run, from any process and
after any time: --approve OP_ID runs that operation and then the rest;
--deny OP_ID refuses it (a policyDenied event, with --reason) and runs the
rest. With -, the answer is read from stdin in one of the protocol's forms:
{"approval": {"operationId": "...", "decision": "approved" | "denied",
"reason": "..."}}, or {"type": "userMessage", "content": "approved"}
(or "denied"), which answers whatever the run waits on. Prints the events
from the answered operation on, with the exit status of 'courier ops'.

A run killed while it ran waits on no approval: 'courier ops resume
RUN_ID' with no answer finishes it, exactly once (the operation caught in
flight is reported, not run again), and prints its events from the first
operation on; if it then stops at an approval, answer that with another
resume. An answer given to a run that waits on nothing is refused.`,
		Example: `  courier ops resume 3f9a1c2e --approve s2
  courier ops resume 3f9a1c2e --deny s2 --reason "not on this machine"
  echo '{"approval":{"operationId":"s2","decision":"approved"}}' | courier ops resume 3f9a1c2e -
  courier ops resume 3f9a1c2e`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: g.sessionArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 && args[1] != "-" {
				return usage(withHint(fmt.Errorf("unexpected argument %q", args[1]), "give - to read the approval from stdin"))
			}
			o.ctx, o.id, o.stdin = cmd.Context(), args[0], len(args) == 2
			return run(runF, resumeRun, o)
		},
	}
	cmd.Flags().StringVar(&o.approve, "approve", "", "approve operation `OP_ID`")
	cmd.Flags().StringVar(&o.deny, "deny", "", "deny operation `OP_ID`")
	cmd.Flags().StringVar(&o.reason, "reason", "", "why it is denied (in the policyDenied event)")
	return cmd
}

func resumeRun(o *resumeOptions) error {
	d, err := o.decision()
	if err != nil {
		return err
	}
	b, err := o.g.runner(view{use: writing, program: true})
	if err != nil {
		return err
	}
	rep, err := b.ResumeRun(o.ctx, o.id, d, agentspaces.ApprovalID)
	return o.g.runEvents(rep, err)
}

// decision is the answer 'courier ops resume' was given; nil when it was
// given none (a run stopped while it ran waits on no approval).
func (o *resumeOptions) decision() (*runner.RunDecision, error) {
	given := 0
	for _, b := range []bool{o.approve != "", o.deny != "", o.stdin} {
		if b {
			given++
		}
	}
	switch {
	case given > 1:
		return nil, usage(withHint(errors.New("give one answer"), "--approve OP_ID, --deny OP_ID, or - with the approval message on stdin"))
	case given == 0 && o.reason != "":
		return nil, usage(withHint(errors.New("--reason goes with --deny"), "--deny OP_ID --reason TEXT"))
	case given == 0:
		return nil, nil
	case !o.stdin:
		return &runner.RunDecision{Operation: o.approve + o.deny, Approved: o.approve != "", Reason: o.reason}, nil
	}
	data, err := io.ReadAll(io.LimitReader(o.g.io.In, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read the approval: %w", err)
	}
	a, err := agentspaces.DecodeApproval(data)
	if err != nil {
		return nil, usage(err)
	}
	return &runner.RunDecision{Operation: a.OperationID, Approved: a.Decision == agentspaces.Approved, Reason: a.Reason}, nil
}

// readOps reads an operations message from a file, or stdin ("" or "-").
func (g *globals) readOps(arg string) (string, []byte, error) {
	var r io.Reader = g.io.In
	name := "stdin"
	if arg != "" && arg != "-" {
		f, err := os.Open(arg)
		if err != nil {
			return "", nil, withHint(fmt.Errorf("read the operations message: %w", err), "courier ops FILE, or - to read stdin")
		}
		defer f.Close()
		r, name = f, arg
	} else if g.io.InTerminal {
		return "", nil, usage(withHint(errors.New("no operations message: stdin is a terminal"), "courier ops FILE, or pipe the message in: courier ops - < ops.json"))
	}
	data, err := io.ReadAll(io.LimitReader(r, agentspaces.MaxMessageBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("read the operations message: %w", err)
	}
	return name, data, nil
}

// runEvents prints where a run stands as its events message, with the
// exit status 'courier ops' promises; an error before the run began is an
// error as any command's.
func (g *globals) runEvents(rep runner.RunReport, err error) error {
	if err != nil && rep.Commands == nil {
		return err
	}
	if sys, ok := errors.AsType[*runner.SystemError](err); ok {
		// The program reads the events; the person at the terminal reads
		// how to go on.
		fmt.Fprintf(g.io.Err, "courier: hint: make room on the disk, then 'courier ops resume %s' finishes the run from operation %d\n", rep.ID, sys.Index+1)
	}
	return g.printEvents(serve.RunEvents(rep, err, time.Now()))
}

// printEvents writes an events message and ends with its exit status.
func (g *globals) printEvents(m agentspaces.EventsMessage) error {
	text, err := agentspaces.FormatEvents(m)
	if err != nil {
		return err
	}
	fmt.Fprint(g.io.Out, text)
	switch m.Status {
	case agentspaces.StatusAwaitingApproval:
		return exitStatus(ExitWaiting)
	case agentspaces.StatusError:
		return exitStatus(1)
	}
	return nil
}

// preset is the policy of a run's preset, built over the person's own
// [policy] table: a preset chosen by a program never lifts their rules,
// and "standard" is exactly their policy.
func (g *globals) preset(name string) (*policy.Policy, error) {
	cfg, err := agentspaces.Preset(name, g.cfg.Policy)
	if err != nil {
		return nil, err
	}
	p, err := policy.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return p, nil
}

type serveOptions struct {
	g      *globals
	ctx    context.Context
	addr   string
	noOpen bool
}

func newServeCmd(g *globals, runF func(*serveOptions) error) *cobra.Command {
	o := &serveOptions{g: g}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Work on the sessions in a browser tab, and serve them over HTTP to programs",
		Long: `Serve this root's sessions as a page (copy the request, paste the answer,
review it before it is applied, answer approvals, say, undo, continue) and
over HTTP for programs: the sessions' JSON API and the Agent Spaces runtime
(/v1/runs), as the README describes. Prints the address with its token
and, on a desktop, opens it. Every request needs the token; only this
machine's loopback is served unless --addr names another address. The page
is one more view of the sessions: 'courier watch' and the other commands
work on them meanwhile. Ctrl-C stops it.`,
		Example: `  courier serve
  courier serve --addr 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx = cmd.Context()
			return run(runF, serveRun, o)
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:0", "the address to listen on (default: the loopback, a free port)")
	cmd.Flags().BoolVar(&o.noOpen, "no-open", false, "do not open the page in a browser")
	return cmd
}

func serveRun(o *serveOptions) error {
	b, err := o.g.runner(view{use: starting, program: true})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return withHint(fmt.Errorf("serve: %w", err), "give another address with --addr, such as 127.0.0.1:0 for a free port")
	}
	token := serve.NewToken()
	url := fmt.Sprintf("http://%s/?token=%s", ln.Addr(), token)
	fmt.Fprintf(o.g.io.Out, "Serving on %s\n", url)
	if _, err := exec.LookPath("xdg-open"); err == nil && !o.noOpen && o.g.desktop() {
		// Without a desktop (or xdg-open) the printed address is all.
		desktopRun("xdg-open", url)
	}
	return serve.New(o.ctx, serve.Options{Config: b.cfg, Token: token}).Run(ln)
}
