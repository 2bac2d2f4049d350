package cli

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/termtext"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/console"
	"github.com/courier-agent/courier/internal/human"
)

type logOptions struct {
	g            *globals
	id           string
	json, output bool
}

func newLogCmd(g *globals, runF func(*logOptions) error) *cobra.Command {
	o := &logOptions{g: g}
	cmd := &cobra.Command{
		Use:   "log [ID]",
		Short: "List a session's turns: each command and how it ended, and the files each turn changed",
		Long: `List the turns of the session ID (default: the most recently updated): each
command of the reply, marked ✗ when it failed, and the files the turn
changed, each once (--json also says which command changed what). --output
adds what each command printed, as the LLM got it (cut to max_output).`,
		Example: `  courier log
  courier log --output
  courier log 3f9a1c2e --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, logRun),
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&o.output, "output", false, "show what each command printed")
	return cmd
}

func logRun(o *logOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	info, turns, err := b.Log(o.id)
	if err != nil {
		return err
	}
	if o.json {
		if turns == nil {
			turns = []history.TurnLog{}
		}
		return writeJSON(o.g.io.Out, turns)
	}
	w := o.g.io.Out
	fmt.Fprintf(w, "Session %s: %s\n", info.ID, termtext.Safe(human.FirstLine(info.Task, 80)))
	if len(turns) == 0 {
		fmt.Fprintln(w, "No replies applied yet.")
	}
	for _, t := range turns {
		printTurn(w, t, o.output)
	}
	return nil
}

// printTurn writes one turn of the log: its reply, each command and how
// it ended (with output, what it printed), and what the turn changed, each
// path once (--json tells what each command changed).
func printTurn(w io.Writer, t history.TurnLog, output bool) {
	var marks []string
	if t.Undone {
		marks = append(marks, "undone")
	}
	if !t.Finished {
		marks = append(marks, "unfinished")
	}
	if t.Pruned {
		marks = append(marks, "snapshot dropped: not undoable")
	}
	mark := ""
	if len(marks) > 0 {
		mark = " [" + strings.Join(marks, ", ") + "]"
	}
	fmt.Fprintf(w, "request %d  %s  %s  %s, %d failed%s\n", t.Sequence,
		t.AppliedAt.Local().Format("2006-01-02 15:04:05"), termtext.Safe(t.Reply), human.Count(t.Commands, "command", ""), t.Failed, mark)
	for _, r := range t.Results {
		ok := "✓"
		if !r.Success() {
			ok = "✗"
		}
		fmt.Fprintf(w, "  %s %s\n", ok, termtext.Safe(console.Describe(command.Command{Type: r.Type, Path: r.Path, Command: r.Command}, r)))
		if output && r.Type == command.RunCommand {
			fmt.Fprint(w, console.Tail(r.Output, math.MaxInt))
		}
	}
	if t.Changed != "" {
		fmt.Fprintf(w, "  files %s\n", termtext.Safe(t.Changed))
	}
}
