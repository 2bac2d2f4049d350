package cli

import (
	"github.com/spf13/cobra"
)

func newUndoCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "undo [ID]",
		Short: "Revert the file changes of the last applied reply",
		Long: `Revert the file changes of the session's last applied reply: files it created
are removed, files it edited or deleted are restored. courier writes a new
outbox telling the LLM what was undone. Run it again to walk back further.
What RUN_COMMAND did is not reverted. A run of 'courier ops' stays complete
and gets no outbox: it has no LLM to tell.`,
		Example: `  courier undo
  courier undo 3f9a1c2e`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := g.runner(view{use: writing})
			if err != nil {
				return err
			}
			s, err := b.HoldLatest(optionalArg(args), "courier undo")
			if err != nil {
				return err
			}
			defer s.Release()
			_, err = s.Undo()
			return err
		},
	}
	return cmd
}
