package cli

import (
	"io"

	"github.com/courier-agent/courier/internal/termtext"

	"github.com/spf13/cobra"
)

type showOptions struct {
	g    *globals
	id   string
	full bool
}

func newShowCmd(g *globals, runF func(*showOptions) error) *cobra.Command {
	o := &showOptions{g: g}
	cmd := &cobra.Command{
		Use:   "show [ID]",
		Short: "Print the session's current outbox, e.g. to pipe it into a clipboard tool",
		Long: `Print the current request of the session ID (default: the most recently
updated one), exactly as written, for a clipboard tool; for a complete
session, its last request. On a terminal, control characters from command
output are shown visibly. With --full the request carries the whole
protocol (where protocol = "first" put a short reminder) and the machine's
description, for pasting into a fresh chat; the session is not changed.
show only reads: a missing outbox file is rendered afresh without running
anything.`,
		Example: `  courier show | xclip -selection clipboard
  courier show 3f9a1c2e | pbcopy
  courier show --full`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, showRun),
	}
	cmd.Flags().BoolVar(&o.full, "full", false, "with the whole protocol and the machine's description, for a fresh chat")
	return cmd
}

func showRun(o *showOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	text, err := b.RequestText(o.id, o.full)
	if err != nil {
		return err
	}
	if o.g.io.OutTerminal {
		text = termtext.Safe(text)
	}
	_, err = io.WriteString(o.g.io.Out, text)
	return err
}
