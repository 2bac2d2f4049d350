package cli

import (
	"fmt"
	"strings"

	"github.com/courier-agent/courier/internal/termtext"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
)

func newLogCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "log [ID]",
		Short: "List a session's turns and the files each changed",
		Example: `  courier log
  courier log 3f9a1c2e --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := g.runner(view{})
			if err != nil {
				return err
			}
			info, turns, err := b.Log(optionalArg(args))
			if err != nil {
				return err
			}
			if asJSON {
				if turns == nil {
					turns = []runner.TurnLog{}
				}
				return writeJSON(g.io.Out, turns)
			}
			w := g.io.Out
			fmt.Fprintf(w, "Session %s: %s\n", info.ID, termtext.Safe(human.FirstLine(info.Task, 80)))
			if len(turns) == 0 {
				fmt.Fprintln(w, "No replies applied yet.")
			}
			for _, t := range turns {
				var marks []string
				if t.Undone {
					marks = append(marks, "undone")
				}
				if !t.Finished {
					marks = append(marks, "unfinished")
				}
				mark := ""
				if len(marks) > 0 {
					mark = " [" + strings.Join(marks, ", ") + "]"
				}
				fmt.Fprintf(w, "request %d  %s  %s  %s, %d failed%s\n", t.Sequence,
					t.AppliedAt.Local().Format("2006-01-02 15:04:05"), termtext.Safe(t.Reply), human.Count(t.Commands, "command", ""), t.Failed, mark)
				note := ""
				if t.Pruned {
					note = " (snapshot dropped: not undoable)"
				}
				for _, c := range t.Changes {
					if c.Path != "" {
						fmt.Fprintf(w, "    %-8s %s (+%d -%d)%s\n", c.Action, termtext.Safe(c.Path), c.Added, c.Removed, note)
					} else {
						fmt.Fprintf(w, "    command %d %s%s\n", c.Index, termtext.Safe(c.Changed), note)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
