package cli

import (
	"github.com/spf13/cobra"
)

func newUndoCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "undo [ID]",
		Short: "Put the workspace back as it was before the last applied reply",
		Long: `Put the workspace back as it was before the session's last applied reply,
what its commands did included: files it created are removed, files it
edited, deleted or whose mode it changed are restored. Paths .gitignore
leaves out of snapshots (node_modules, build outputs) are not put back,
unless snapshot_include names them, and undo says so; with snapshots =
false only what file commands did is reverted. courier writes a new outbox
telling the LLM what was undone. Run it again to walk back further. A run
of 'courier ops' stays complete and gets no outbox: it has no LLM to tell.`,
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
