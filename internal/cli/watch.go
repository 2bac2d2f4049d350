package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

// watchFlags are the flags of every command that waits for replies (poll
// and settle are settings, so they are flags of every command).
type watchFlags struct {
	clipboard bool
}

func (w *watchFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&w.clipboard, "clipboard", false, "also take the LLM's answer when you copy it (text with command blocks)")
}

type watchOptions struct {
	g     *globals
	id    string
	flags watchFlags
	// fresh is set when the session was just created by 'new'.
	fresh bool
}

func newWatchCmd(g *globals) *cobra.Command {
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
			o.id = optionalArg(args)
			return runWatch(cmd.Context(), o)
		},
	}
	o.flags.register(cmd)
	return cmd
}

// errStopWatch ends the watch loop without an error.
var errStopWatch = errors.New("stop watching")

func runWatch(ctx context.Context, o *watchOptions) error {
	g := o.g
	l, err := g.loop()
	if err != nil {
		return err
	}
	h, err := g.hold(l, o.id, "courier watch")
	if err != nil {
		return err
	}
	defer h.release()
	con := g.newConsole(l)
	if h.st.IsComplete {
		fmt.Fprintf(g.io.Out, "Session %s is already complete.\n", h.st.SessionID)
		return nil
	}
	out, recovered, err := g.recoverTurn(ctx, l, h, con)
	if err != nil {
		return interrupted(ctx, h, err)
	}
	if recovered {
		if stop, err := g.afterTurn(h, out); stop || err != nil {
			return err
		}
	}
	outbox, rewritten, err := l.EnsureOutbox(h.st)
	if err != nil {
		return err
	}
	if !o.fresh {
		if rewritten {
			fmt.Fprintf(g.io.Out, "Session %s: rewrote the missing outbox\n", h.st.SessionID)
		}
		fmt.Fprintf(g.io.Out, "Session %s, request %d\n", h.st.SessionID, h.st.SequenceNumber)
		g.announce(con, outbox)
	}
	if o.flags.clipboard {
		cctx, stop := context.WithCancel(ctx)
		defer stop()
		go g.watchClipboard(cctx, l, h.st, con)
	}
	fmt.Fprintf(g.io.Out, "Waiting for the reply in %s (Ctrl-C to stop)\n", con.rel(l.Paths.Inbox)+"/")
	skipped := map[string]bool{}
	err = inbox.Watch(ctx, l.Paths.Inbox, inbox.WatchOptions{Poll: g.cfg.Poll, Settle: g.cfg.Settle, Log: g.io.Err}, func(path string) error {
		r, err := g.readReply(l, path, con)
		if err != nil {
			report(g.io.Err, err)
			return nil
		}
		if id := runner.Route(r); id != "" && id != h.st.SessionID {
			if !skipped[path] {
				fmt.Fprintf(g.io.Out, "Reply %s is for session %s; leaving it for that session\n", con.rel(path), id)
				skipped[path] = true
			}
			return nil
		}
		out, err := g.apply(ctx, l, h, r, con)
		var refused *runner.RefusedError
		if errors.As(err, &refused) {
			return nil
		}
		if err != nil {
			return err
		}
		if stop, err := g.afterTurn(h, out); stop || err != nil {
			if err == nil {
				err = errStopWatch
			}
			return err
		}
		fmt.Fprintf(g.io.Out, "Waiting for the reply in %s (Ctrl-C to stop)\n", con.rel(l.Paths.Inbox)+"/")
		return nil
	})
	switch {
	case errors.Is(err, errStopWatch):
		return nil
	case err != nil:
		return interrupted(ctx, h, err)
	case ctx.Err() != nil:
		return interrupted(ctx, h, ctx.Err())
	}
	return nil
}

// afterTurn decides whether watching goes on after a turn: not when the
// session is complete, nor when it waits for an approval that only
// 'courier approve' can give.
func (g *globals) afterTurn(h *held, out runner.Outcome) (bool, error) {
	if h.st.IsComplete {
		return true, nil
	}
	if p := out.Engine.Waiting; p != nil {
		return true, &ExitError{Code: ExitWaiting, Err: waitingError(h.st.SessionID, p.Command, p.Reason)}
	}
	return false, nil
}

// interrupted turns a Ctrl-C into a calm message; the journal keeps the
// state consistent, and the next run finishes what was begun.
func interrupted(ctx context.Context, h *held, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return &ExitError{Code: 130, Err: quietError(fmt.Sprintf("stopped; run 'courier watch %s' to go on", h.st.SessionID))}
	}
	return err
}
