package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

type undoOptions struct {
	g  *globals
	id string
}

func newUndoCmd(g *globals, runF func(*undoOptions) error) *cobra.Command {
	o := &undoOptions{g: g}
	return &cobra.Command{
		Use:   "undo [ID]",
		Short: "Put the workspace back as it was before the last applied reply",
		Long: `Put the workspace back as it was before the session's last applied reply,
what its commands did included: files it created are removed, files it
edited, deleted or whose mode it changed are restored. Paths .gitignore
leaves out of snapshots (node_modules, build outputs) are not put back,
unless snapshot_include names them, and undo says so; with snapshots =
false only what file commands did is reverted. courier writes a new outbox
telling the LLM what was undone. Run it again to walk back further. A run
of 'courier ops' stays complete and gets no outbox: it has no LLM to tell.
When 'courier watch' holds the session in another terminal, waiting for
the next reply, the undo is given to it: it undoes the turn and writes the
new request there.`,
		Example: `  courier undo
  courier undo 3f9a1c2e`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, undoRun),
	}
}

func undoRun(o *undoOptions) error {
	b, err := o.g.runner(view{use: writing})
	if err != nil {
		return err
	}
	h, err := b.Undo(o.id)
	switch {
	case h != nil && h.Outbox != "":
		fmt.Fprintf(o.g.io.Out, "Gave the undo to the %s holding session %s, which undid the changes of the reply to request %d: next request %s\n", h.Holder, h.Session, h.Sequence, b.text.Rel(h.Outbox))
	case h != nil:
		fmt.Fprintf(o.g.io.Out, "Gave the undo to the %s holding session %s, which undoes the changes of the reply to request %d and writes the next request\n", h.Holder, h.Session, h.Sequence)
	}
	return err
}
