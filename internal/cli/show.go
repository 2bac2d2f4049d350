package cli

import (
	"io"

	"github.com/courier-agent/courier/internal/termtext"

	"github.com/spf13/cobra"
)

func newShowCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show [ID]",
		Short: "Print the session's current outbox, e.g. to pipe it into a clipboard tool",
		Long: `Print the current request of the session ID (default: the most recently
updated incomplete one), exactly as written, for a clipboard tool; on a
terminal, control characters from command output are shown visibly.`,
		Example: `  courier show | xclip -selection clipboard
  courier show 3f9a1c2e | pbcopy`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := g.runner(view{})
			if err != nil {
				return err
			}
			text, err := b.RequestText(optionalArg(args))
			if err != nil {
				return err
			}
			if g.io.OutTerminal {
				text = termtext.Safe(text)
			}
			_, err = io.WriteString(g.io.Out, text)
			return err
		},
	}
	return cmd
}
