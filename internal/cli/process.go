package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/loop"
)

type processOptions struct {
	g       *globals
	file    string
	session string
}

func newProcessCmd(g *globals) *cobra.Command {
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
			o.file = optionalArg(args)
			return runProcess(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.session, "session", "", "apply to this session instead of the one the reply names")
	return cmd
}

func runProcess(ctx context.Context, o *processOptions) error {
	l, err := o.g.loop()
	if err != nil {
		return err
	}
	con := o.g.newConsole(l)
	if o.file != "" {
		return o.processFile(ctx, l, con, o.file)
	}
	if err := o.recoverAll(ctx, l, con); err != nil {
		return err
	}
	pending, err := inbox.Pending(l.Paths.Inbox)
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		fmt.Fprintf(o.g.io.Out, "No replies waiting in %s\n", con.rel(l.Paths.Inbox)+"/")
		return nil
	}
	var failed error
	for _, p := range pending {
		if err := o.processFile(ctx, l, con, p); err != nil {
			var ee *ExitError
			if ctx.Err() != nil || errors.As(err, &ee) {
				return err
			}
			report(o.g.io.Err, err)
			failed = &ExitError{Code: 1, Err: quietError("some replies could not be applied")}
		}
	}
	return failed
}

// processFile applies one reply to the session it routes to, first
// finishing an interrupted turn of that session.
func (o *processOptions) processFile(ctx context.Context, l *loop.Loop, con *console, path string) error {
	r, err := o.g.readReply(l, path, con)
	if err != nil {
		return err
	}
	id := o.session
	if id == "" {
		id = loop.Route(r)
	}
	h, err := o.g.hold(l, id, "courier process")
	if err != nil {
		return err
	}
	defer h.release()
	rec, recovered, err := o.g.recoverTurn(ctx, l, h, con)
	if err != nil {
		return interrupted(ctx, h, err)
	}
	if recovered {
		if stop, err := o.g.afterTurn(h, rec); stop || err != nil {
			if err == nil {
				err = fmt.Errorf("session %s is complete; %s was not applied", h.st.SessionID, con.rel(path))
			}
			return err
		}
	}
	out, err := o.g.apply(ctx, l, h, r, con)
	var refused *loop.RefusedError
	if errors.As(err, &refused) {
		if refused.Duplicate {
			return nil
		}
		return &ExitError{Code: 1, Err: quietError("the reply was not applied")}
	}
	if err != nil {
		return interrupted(ctx, h, err)
	}
	_, err = o.g.afterTurn(h, out)
	return err
}

// recoverAll finishes the interrupted turns of every incomplete session
// (or of --session).
func (o *processOptions) recoverAll(ctx context.Context, l *loop.Loop, con *console) error {
	ids := []string{o.session}
	if o.session == "" {
		ids = nil
		all, _ := l.Store.List()
		for _, st := range all {
			if _, ok := l.Unfinished(st); (ok && st.Pending == nil) || st.Undoing != nil {
				ids = append(ids, st.SessionID)
			}
		}
	}
	for _, id := range ids {
		h, err := o.g.hold(l, id, "courier process")
		if err != nil {
			return err
		}
		out, recovered, err := o.g.recoverTurn(ctx, l, h, con)
		if err == nil && recovered {
			_, err = o.g.afterTurn(h, out)
		}
		h.release()
		if err != nil {
			return interrupted(ctx, h, err)
		}
	}
	return nil
}
