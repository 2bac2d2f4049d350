package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type decideOptions struct {
	g       *globals
	id      string
	approve bool
	all     bool
	reason  string
}

func newApproveCmd(g *globals) *cobra.Command {
	o := &decideOptions{g: g, approve: true}
	cmd := &cobra.Command{
		Use:   "approve [ID]",
		Short: "Run the command a session waits on, and go on with the reply",
		Long: `Approve the command the session is waiting on (see 'courier status'): it
runs, and the rest of the reply is carried out in order. With --all, later
commands like it run without asking for the rest of the session.`,
		Example: `  courier approve 3f9a1c2e
  courier approve --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id = optionalArg(args)
			return runDecide(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "also approve every later command like it in this session")
	return cmd
}

func newDenyCmd(g *globals) *cobra.Command {
	o := &decideOptions{g: g}
	cmd := &cobra.Command{
		Use:   "deny [ID]",
		Short: "Refuse the command a session waits on, and go on with the reply",
		Long: `Refuse the command the session is waiting on: it does not run, the LLM is
told (with --reason, why), and the rest of the reply is carried out.`,
		Example: `  courier deny 3f9a1c2e --reason "do not delete the build cache"`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id = optionalArg(args)
			return runDecide(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "tell the LLM why")
	return cmd
}

func runDecide(ctx context.Context, o *decideOptions) error {
	g := o.g
	l, err := g.loop()
	if err != nil {
		return err
	}
	id := o.id
	if id == "" {
		// The session waiting for approval, rather than just the latest.
		all, _ := l.Store.List()
		for _, st := range all {
			if st.Pending != nil {
				id = st.SessionID
				break
			}
		}
	}
	h, err := g.hold(l, id, "courier "+map[bool]string{true: "approve", false: "deny"}[o.approve])
	if err != nil {
		return err
	}
	defer h.release()
	p, err := l.Decide(h.st, o.approve, o.all, o.reason)
	if err != nil {
		return err
	}
	verb := "Denied"
	if o.approve {
		verb = "Approved"
	}
	fmt.Fprintf(g.io.Out, "%s '%s'\n", verb, firstLine(p.Command, 80))
	con := g.newConsole(l)
	out, _, err := g.recoverTurn(ctx, l, h, con)
	if err != nil {
		return interrupted(ctx, h, err)
	}
	_, err = g.afterTurn(h, out)
	return err
}
