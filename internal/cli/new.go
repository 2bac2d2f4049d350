package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/runner"
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
			b, err := g.runner(view{use: starting, json: o.watch.json, wait: runner.Later})
			if err != nil {
				return err
			}
			id, err := b.Create(o.task, runner.CreateOptions{Includes: o.includes})
			if err != nil {
				return err
			}
			if o.noWatch {
				if b.text != nil {
					fmt.Fprintf(g.io.Out, "Then run 'courier watch %s' (or 'courier process' once the answer is saved).\n", id)
				}
				return nil
			}
			return watch(cmd.Context(), b, &watchOptions{g: g, id: id, flags: o.watch})
		},
	}
	cmd.Flags().BoolVar(&o.noWatch, "no-watch", false, "exit after writing the first outbox")
	cmd.Flags().StringArrayVar(&o.includes, "include", nil, "attach the files matching GLOB to the first request (repeatable)")
	o.watch.register(cmd)
	return cmd
}
