package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/courier-agent/courier/internal/termtext"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
)

// statusText is how status and sessions word a session's state.
func statusText(i runner.Info) string {
	switch i.State {
	case runner.StateUndoing:
		return "undo interrupted (run 'courier undo' or 'courier process' to finish it)"
	case runner.StateComplete:
		return "complete"
	case runner.StateAwaitingApproval:
		return "awaiting approval"
	case runner.StateApplying:
		switch {
		case i.Holder != nil && i.Run:
			return "running"
		case i.Holder != nil:
			return "applying a reply"
		case i.Run:
			return fmt.Sprintf("interrupted (run 'courier ops resume %s' to finish)", i.ID)
		}
		return "interrupted (run 'courier process' to finish)"
	}
	if i.Run {
		// A run's one turn never began: its operations could not even be
		// journaled (a full disk); nothing of it ran.
		return "never began (send its operations again)"
	}
	return "waiting for reply"
}

type statusOptions struct {
	g    *globals
	id   string
	json bool
}

func newStatusCmd(g *globals, runF func(*statusOptions) error) *cobra.Command {
	o := &statusOptions{g: g}
	cmd := &cobra.Command{
		Use:   "status [ID]",
		Short: "Show where a session stands",
		Long: `Show where the session ID (default: the most recently updated one) stands:
waiting for a reply, awaiting approval, applying a reply, or complete, and
which courier process works on it now and what it waits for. With --json,
"state" is one of waiting, awaiting_approval, applying, complete.`,
		Example: `  courier status
  courier status 3f9a1c2e --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, statusRun),
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return cmd
}

func statusRun(o *statusOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	info, err := b.Status(o.id)
	if err != nil {
		return err
	}
	if info.Run && info.PendingCommand != nil {
		info.Operation = agentspaces.ApprovalID(*info.PendingCommand, info.Pending.Index)
	}
	if o.json {
		return writeJSON(o.g.io.Out, info)
	}
	w := stepsWriter{o.g.io.Out, o.g}
	fmt.Fprintf(w, "Session:   %s\n", info.ID)
	fmt.Fprintf(w, "Task:      %s\n", termtext.Safe(human.FirstLine(info.Task, 100)))
	fmt.Fprintf(w, "Status:    %s\n", statusText(info))
	fmt.Fprintf(w, "Request:   %d\n", info.Sequence)
	if info.Request != "" {
		fmt.Fprintf(w, "Outbox:    %s\n", b.text.Rel(info.Request))
	}
	fmt.Fprintf(w, "Workspace: %s\n", termtext.Safe(info.Workspace))
	fmt.Fprintf(w, "Updated:   %s\n", info.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	if h := info.Holder; h != nil {
		fmt.Fprintf(w, "Held by:   %s\n", termtext.Safe(h.String()))
	}
	if p := info.Pending; p != nil {
		fmt.Fprintf(w, "Waiting:   approval of %s (%s)\n", termtext.Command(p.Command, p.Env), termtext.Safe(p.Reason))
		op, shown := info.Operation, plainWord(info.Operation)
		switch {
		case info.Run && shown:
			// A run is answered by operation id, with the ops commands.
			fmt.Fprintf(w, "           run 'courier ops resume %s --approve %s' or '--deny %s'\n", info.ID, op, op)
		case info.Run:
			fmt.Fprintf(w, "           run 'courier ops resume %s' with --approve or --deny and the operation's id (its approvalRequired event names it)\n", info.ID)
		default:
			fmt.Fprintf(w, "           run 'courier approve %s' or 'courier deny %s'\n", info.ID, info.ID)
			if p.Covers != "" {
				fmt.Fprintf(w, "           ('courier approve --all %s' also runs, without asking, %s)\n", info.ID, termtext.Safe(p.Covers))
			}
		}
	}
	if info.Summary != "" {
		fmt.Fprintf(w, "Summary:   %s\n", termtext.Safe(strings.ReplaceAll(strings.TrimSpace(info.Summary), "\n", "\n           ")))
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// plainWord reports whether an operation id, written by the program that
// sent the operations, can be offered in a command line: only a short
// word of letters, digits, '.', '_' and '-', so that no id can make the
// suggestion read as more than it is ("x; rm -rf ~", or characters a
// terminal hides).
func plainWord(id string) bool {
	return id != "" && len(id) <= 80 && strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}
