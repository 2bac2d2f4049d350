package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/agentrun"
	"github.com/courier-agent/courier/internal/clipboard"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

// eventsFlag is --json of the commands that report a turn's events.
func eventsFlag(cmd *cobra.Command, p *bool) {
	cmd.Flags().BoolVar(p, "json", false, "print one JSON object per event instead of text")
}

type watchOptions struct {
	g    *globals
	ctx  context.Context
	id   string
	json bool
}

func newWatchCmd(g *globals, runF func(*watchOptions) error) *cobra.Command {
	o := &watchOptions{g: g}
	cmd := &cobra.Command{
		Use:     "watch [ID]",
		Aliases: []string{"resume"},
		Short:   "Resume a session and apply each reply saved into inbox/",
		Long: `Resume the session ID (default: the most recently updated incomplete one),
rewrite its current outbox if it is missing, and wait for replies in inbox/.
Each reply is applied and the next outbox written, until the LLM sends DONE.
Ctrl-C stops cleanly; run 'courier watch' again to go on.`,
		Example: `  courier watch
  courier resume 3f9a1c2e --poll`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ctx, o.id = cmd.Context(), optionalArg(args)
			return run(runF, watchRun, o)
		},
	}
	eventsFlag(cmd, &o.json)
	return cmd
}

func watchRun(o *watchOptions) error {
	b, err := o.g.runner(view{use: writing, json: o.json, wait: runner.Later})
	if err != nil {
		return err
	}
	return o.g.watch(o.ctx, b, o.id)
}

// watch serves a session from the inbox (and the clipboard) until it is
// complete, a question stops it, or Ctrl-C.
func (g *globals) watch(ctx context.Context, b *built, id string) error {
	s, err := b.Hold(id, "courier watch")
	if err != nil {
		return err
	}
	defer s.Release()
	if s.Complete() {
		fmt.Fprintf(g.io.Out, "Session %s is already complete.\n", s.ID())
		return nil
	}
	if g.agentChosen() {
		src, err := g.agentSource(b, s)
		if err != nil {
			return err
		}
		return s.Serve(ctx, src)
	}
	warn := func(msg string) { b.cfg.Reporter.Warning(runner.Warning{Message: msg}) }
	var src runner.Source = inbox.NewWatcher(b.Paths().Inbox, s.ID(), inbox.WatchOptions{
		Poll: g.cfg.Poll, Settle: g.cfg.Settle, MaxReply: g.cfg.MaxReply, Warn: warn})
	if g.cfg.Clipboard {
		if cb := g.clipboard(b.cfg.Reporter); cb != nil {
			src = runner.Either(src, clipboard.NewSource(cb, b.Paths().Inbox+"/processed"))
		}
	}
	return s.Serve(ctx, src)
}

// optionalArg returns the single optional argument, or "".
func optionalArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return ""
}

// agentSource returns the agent the settings choose as the held session's
// source (holding it closed the runs a crashed courier left open).
func (g *globals) agentSource(b *built, s *runner.Session) (*agentrun.Source, error) {
	spec := g.cfg.AgentSpec()
	spec.Getenv = g.io.Getenv
	a, err := agent.New(spec)
	if err != nil {
		return nil, err
	}
	return agentrun.New(agentrun.Options{
		Agent:      a,
		Model:      spec.Model,
		SessionDir: s.Folder(),
		Workspace:  s.Workspace(),
		MaxTurns:   g.cfg.Agent.MaxTurns,
		Restarts:   agent.RestartPolicy{MaxRestarts: g.cfg.Agent.MaxRestarts, Pause: g.cfg.Agent.RestartPause},
		TimeBudget: g.cfg.Agent.TimeBudget,
		Reporter:   b.cfg.Reporter,
	}), nil
}
