package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
)

type newOptions struct {
	g        *globals
	task     string
	noWatch  bool
	includes []string
	protocol string
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
  courier new --no-watch --include 'src/*.go' "add input validation to the parser"
  courier new --protocol json "add a --json flag to the report command"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.task = strings.Join(args, " ")
			if !slices.Contains(protocolNames(), o.protocol) {
				return usage(withHint(fmt.Errorf("unknown protocol %q", o.protocol), "--protocol "+strings.Join(protocolNames(), " or ")))
			}
			b, err := g.runner(view{use: starting, json: o.watch.json, wait: runner.Later})
			if err != nil {
				return err
			}
			id, err := b.Create(o.task, runner.CreateOptions{Includes: o.includes, Protocol: o.protocol, SnapshotLater: o.noWatch})
			if err != nil {
				return err
			}
			if o.noWatch {
				if b.text != nil {
					fmt.Fprintf(stepsWriter{g.io.Out, g}, "Then run 'courier watch %s' (or 'courier process' once the answer is saved).\n", id)
				}
				return nil
			}
			return watch(cmd.Context(), b, &watchOptions{g: g, id: id, flags: o.watch})
		},
	}
	cmd.Flags().BoolVar(&o.noWatch, "no-watch", false, "exit after writing the first outbox")
	cmd.Flags().StringArrayVar(&o.includes, "include", nil, "pack the files matching GLOB into the first request (repeatable)")
	cmd.Flags().StringVar(&o.protocol, "protocol", protocol.TagsName, "how the LLM answers: tags ([COMMAND] blocks) or json (Agent Spaces operations messages)")
	_ = cmd.RegisterFlagCompletionFunc("protocol", cobra.FixedCompletions(protocolNames(), cobra.ShellCompDirectiveNoFileComp))
	o.watch.register(cmd)
	return cmd
}
