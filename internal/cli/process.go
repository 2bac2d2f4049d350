package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

type processOptions struct {
	g       *globals
	ctx     context.Context
	file    string
	session string
	json    bool
}

func newProcessCmd(g *globals, runF func(*processOptions) error) *cobra.Command {
	o := &processOptions{g: g}
	cmd := &cobra.Command{
		Use:   "process [FILE]",
		Short: "Apply one reply (or the replies waiting in inbox/) and exit",
		Long: `Apply the reply FILE to its session (the one it names, --session, or the
most recently updated incomplete one), write the next outbox, print the
result of each command and exit. Without FILE, finish any turn that was
interrupted and apply the replies waiting in inbox/, oldest first.
A reply whose commands failed still counts as applied: the failures go to
the LLM in the next outbox.`,
		Example: `  courier process inbox/answer.txt
  courier process --session 3f9a1c2e ~/Downloads/reply.md
  courier process`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ctx, o.file = cmd.Context(), optionalArg(args)
			return run(runF, processRun, o)
		},
	}
	cmd.Flags().StringVar(&o.session, "session", "", "apply to this session instead of the one the reply names")
	eventsFlag(cmd, &o.json)
	return cmd
}

func processRun(o *processOptions) error {
	b, err := o.g.runner(view{use: writing, json: o.json, wait: runner.Stop})
	if err != nil {
		return err
	}
	if o.file != "" {
		return b.ApplyFrom(o.ctx, &inbox.File{Path: o.file, Inbox: b.Paths().Inbox, MaxReply: o.g.cfg.MaxReply}, o.session, "courier process")
	}
	q := inbox.Queue{Dir: b.Paths().Inbox, MaxReply: o.g.cfg.MaxReply}
	waiting, err := inbox.Pending(q.Dir)
	if err != nil {
		return err
	}
	if err := b.ProcessQueue(o.ctx, q, "courier process"); err != nil {
		return err
	}
	if len(waiting) == 0 && b.text != nil {
		fmt.Fprintf(o.g.io.Out, "No replies waiting in %s/\n", b.text.Rel(q.Dir))
	}
	return nil
}
