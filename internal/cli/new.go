package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
)

// newOptions are those of new and continue.
type newOptions struct {
	g             *globals
	ctx           context.Context
	words         []string // the task; continue's may begin with an id
	noWatch, json bool
	includes      []string
	protocol      string
}

func newNewCmd(g *globals, runF func(*newOptions) error) *cobra.Command {
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
			if !slices.Contains(protocolNames(), o.protocol) {
				return usage(withHint(fmt.Errorf("unknown protocol %q", o.protocol), "--protocol "+strings.Join(protocolNames(), " or ")))
			}
			o.ctx, o.words = cmd.Context(), args
			return run(runF, newRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.noWatch, "no-watch", false, "exit after writing the first outbox")
	cmd.Flags().StringArrayVar(&o.includes, "include", nil, "pack the files matching GLOB into the first request (repeatable)")
	cmd.Flags().StringVar(&o.protocol, "protocol", protocol.TagsName, "how the LLM answers: tags ([COMMAND] blocks) or json (Agent Spaces operations messages)")
	_ = cmd.RegisterFlagCompletionFunc("protocol", cobra.FixedCompletions(protocolNames(), cobra.ShellCompDirectiveNoFileComp))
	eventsFlag(cmd, &o.json)
	return cmd
}

func newRun(o *newOptions) error {
	b, err := o.g.runner(view{use: starting, json: o.json, wait: runner.Later})
	if err != nil {
		return err
	}
	id, err := b.Create(strings.Join(o.words, " "), runner.CreateOptions{Includes: o.includes, Protocol: o.protocol, SnapshotLater: o.noWatch})
	if err != nil {
		return err
	}
	if o.noWatch {
		if b.text != nil {
			fmt.Fprintf(stepsWriter{o.g.io.Out, o.g}, "Then run 'courier watch %s' (or 'courier process' once the answer is saved).\n", id)
		}
		return nil
	}
	return o.g.watch(o.ctx, b, id)
}
