package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/termtext"
)

func newShowCmd(g *globals) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "show [ID]",
		Short: "Print the session's current outbox, e.g. to pipe it into a clipboard tool",
		Example: `  courier show | xclip -selection clipboard
  courier show 3f9a1c2e | pbcopy`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id = optionalArg(args)
			l, st, err := g.resolve(id)
			if err != nil {
				return err
			}
			if st.IsComplete {
				return fmt.Errorf("session %s is complete; it has no request waiting", st.SessionID)
			}
			data, err := os.ReadFile(l.OutboxPath(st.SessionID, st.SequenceNumber))
			if err != nil {
				// A lost outbox is rebuilt from the session state.
				text, rerr := l.RenderOutbox(st)
				if rerr != nil {
					return rerr
				}
				data = []byte(text)
			}
			if g.io.OutTerminal {
				// Piped into a clipboard tool it stays as it is.
				data = []byte(termtext.Safe(string(data)))
			}
			_, err = g.io.Out.Write(data)
			return err
		},
	}
	return cmd
}
