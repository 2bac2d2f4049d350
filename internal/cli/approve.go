package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

type decideOptions struct {
	g       *globals
	ctx     context.Context
	id      string
	approve bool
	all     bool
	reason  string
}

func newApproveCmd(g *globals, runF func(*decideOptions) error) *cobra.Command {
	o := &decideOptions{g: g, approve: true}
	cmd := &cobra.Command{
		Use:   "approve [ID]",
		Short: "Run the command a session waits on, and go on with the reply",
		Long: `Approve the command the session is waiting on (see 'courier status'): it
runs, and the rest of the reply is carried out in order. With --all, later
commands like it run without asking for the rest of the session. When a
'courier watch' waits on the question in another terminal, it gets the
answer and goes on by itself.`,
		Example: `  courier approve 3f9a1c2e
  courier approve --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ctx, o.id = cmd.Context(), optionalArg(args)
			return run(runF, decideRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "also approve every later command like it in this session")
	return cmd
}

func newDenyCmd(g *globals, runF func(*decideOptions) error) *cobra.Command {
	o := &decideOptions{g: g}
	cmd := &cobra.Command{
		Use:   "deny [ID]",
		Short: "Refuse the command a session waits on, and go on with the reply",
		Long: `Refuse the command the session is waiting on: it does not run, the LLM is
told (with --reason, why), and the rest of the reply is carried out.`,
		Example: `  courier deny 3f9a1c2e --reason "do not delete the build cache"`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ctx, o.id = cmd.Context(), optionalArg(args)
			return run(runF, decideRun, o)
		},
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "tell the LLM why")
	return cmd
}

func decideRun(o *decideOptions) error {
	b, err := o.g.runner(view{use: writing, wait: runner.Stop})
	if err != nil {
		return err
	}
	d := runner.Decision{Answer: runner.Deny, Reason: o.reason}
	switch {
	case o.approve && o.all:
		d = runner.Decision{Answer: runner.ApproveAll}
	case o.approve:
		d = runner.Decision{Answer: runner.Approve}
	}
	handed, err := b.Decide(o.ctx, o.id, d, inbox.Queue{Dir: b.Paths().Inbox, MaxReply: o.g.cfg.MaxReply}.Source("", false))
	if handed {
		verb := "denial"
		if o.approve {
			verb = "approval"
		}
		fmt.Fprintf(o.g.io.Out, "Gave the %s to the courier process waiting for it; it goes on there\n", verb)
	}
	return err
}
