package cli

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"
)

func newUndoCmd(g *globals) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "undo [ID]",
		Short: "Revert the file changes of the last applied reply",
		Long: `Revert the file changes of the session's last applied reply: files it created
are removed, files it edited or deleted are restored. courier writes a new
outbox telling the LLM what was undone. Run it again to walk back further.
What RUN_COMMAND did is not reverted.`,
		Example: `  courier undo
  courier undo 3f9a1c2e`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id = optionalArg(args)
			l, err := g.loop()
			if err != nil {
				return err
			}
			h, err := g.hold(l, id, "courier undo")
			if err != nil {
				return err
			}
			defer h.release()
			rep, err := l.Undo(h.st)
			if err != nil {
				return err
			}
			con := g.newConsole(l)
			w := g.io.Out
			done := "Undid the file changes"
			if rep.Resumed {
				done = "Finished the interrupted undo of the file changes"
			}
			fmt.Fprintf(w, "%s of the reply to request %d of session %s\n", done, rep.Sequence, h.st.SessionID)
			for _, p := range rep.Restored {
				fmt.Fprintf(w, "  restored %s\n", p)
			}
			for _, p := range rep.Removed {
				fmt.Fprintf(w, "  removed  %s\n", p)
			}
			kept := make([]string, 0, len(rep.Kept))
			for p := range rep.Kept {
				kept = append(kept, p)
			}
			sort.Strings(kept)
			for _, p := range kept {
				fmt.Fprintf(g.io.Err, "courier: warning: %s had changed since that reply; its content was kept in %s\n", p, con.rel(rep.Kept[p]))
			}
			g.announce(con, rep.Outbox)
			return nil
		},
	}
	return cmd
}
