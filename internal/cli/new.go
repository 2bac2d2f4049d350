package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

type newOptions struct {
	g        *globals
	task     string
	noWatch  bool
	includes []string
	watch    watchFlags
}

func newNewCmd(g *globals) *cobra.Command {
	o := &newOptions{g: g}
	cmd := &cobra.Command{
		Use:   "new TASK...",
		Short: "Start a session: write the first request and wait for the reply",
		Long: `Start a session for TASK: courier writes outbox/<id>_seq0001.txt, prints the
session id and the outbox path, and then watches inbox/ for the reply, as
'courier watch' does. With --no-watch it exits right after writing the outbox.`,
		Example: `  courier new "write a Python script that counts words in a file"
  courier new --no-watch --include 'src/*.go' "add input validation to the parser"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.task = strings.Join(args, " ")
			return runNew(cmd, o)
		},
	}
	cmd.Flags().BoolVar(&o.noWatch, "no-watch", false, "exit after writing the first outbox")
	cmd.Flags().StringArrayVar(&o.includes, "include", nil, "attach the files matching GLOB to the first request (repeatable)")
	o.watch.register(cmd)
	return cmd
}

func runNew(cmd *cobra.Command, o *newOptions) error {
	l, err := o.g.loop()
	if err != nil {
		return err
	}
	st, outbox, err := l.NewSession(o.task, o.includes)
	if err != nil {
		return err
	}
	con := o.g.newConsole(l)
	fmt.Fprintf(o.g.io.Out, "Session: %s\n", st.SessionID)
	fmt.Fprintf(o.g.io.Out, "Outbox: %s\n", con.rel(outbox))
	o.g.announce(con, outbox)
	if o.noWatch {
		fmt.Fprintf(o.g.io.Out, "Then run 'courier watch %s' (or 'courier process' once the answer is saved).\n", st.SessionID)
		return nil
	}
	return runWatch(cmd.Context(), &watchOptions{g: o.g, id: st.SessionID, flags: o.watch, fresh: true})
}
