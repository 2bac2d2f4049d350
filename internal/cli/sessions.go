package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/courier-agent/courier/internal/termtext"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/human"
)

type sessionsOptions struct {
	g    *globals
	json bool
}

func newSessionsCmd(g *globals, runF func(*sessionsOptions) error) *cobra.Command {
	o := &sessionsOptions{g: g}
	cmd := &cobra.Command{
		Use:     "sessions",
		Short:   "List the sessions, most recently updated first",
		Example: `  courier sessions --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(runF, sessionsRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return cmd
}

func sessionsRun(o *sessionsOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	infos, errs := b.Sessions()
	for _, e := range errs {
		b.text.Warn(termtext.Safe(e.Error()), "")
	}
	if o.json {
		return writeJSON(o.g.io.Out, infos)
	}
	if len(infos) == 0 {
		fmt.Fprintln(o.g.io.Out, `No sessions yet; start one with: courier new "TASK"`)
		return nil
	}
	tw := tabwriter.NewWriter(o.g.io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tREQUEST\tSTATUS\tUPDATED\tTASK")
	for _, i := range infos {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", i.ID, i.Sequence, statusText(i), i.UpdatedAt.Local().Format("2006-01-02 15:04"), termtext.Safe(human.FirstLine(i.Task, 50)))
	}
	return tw.Flush()
}
