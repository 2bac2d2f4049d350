package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/loop"
	"github.com/courier-agent/courier/internal/session"
)

// sessionInfo is the view of a session that status and sessions print.
type sessionInfo struct {
	ID        string           `json:"id"`
	Task      string           `json:"task"`
	Sequence  int              `json:"sequence"`
	Complete  bool             `json:"complete"`
	Status    string           `json:"status"`
	UpdatedAt time.Time        `json:"updatedAt"`
	CreatedAt time.Time        `json:"createdAt"`
	Workspace string           `json:"workspace"`
	Outbox    string           `json:"outbox,omitempty"`
	Pending   *session.Pending `json:"pending,omitempty"`
	Summary   string           `json:"summary,omitempty"`
}

func infoOf(l *loop.Loop, st *session.State) sessionInfo {
	i := sessionInfo{ID: st.SessionID, Task: st.Task, Sequence: st.SequenceNumber, Complete: st.IsComplete,
		Status: st.Status(), UpdatedAt: st.UpdatedAt, CreatedAt: st.CreatedAt, Workspace: st.Workspace,
		Pending: st.Pending, Summary: st.Summary}
	if !st.IsComplete {
		i.Outbox = l.OutboxPath(st.SessionID, st.SequenceNumber)
	}
	if _, ok := l.Unfinished(st); ok && st.Pending == nil {
		i.Status = "interrupted (run 'courier process' to finish)"
	}
	if st.Undoing != nil {
		i.Status = "undo interrupted (run 'courier undo' or 'courier process' to finish it)"
	}
	return i
}

type statusOptions struct {
	g    *globals
	id   string
	json bool
}

func newStatusCmd(g *globals) *cobra.Command {
	o := &statusOptions{g: g}
	cmd := &cobra.Command{
		Use:   "status [ID]",
		Short: "Show where a session stands",
		Example: `  courier status
  courier status 3f9a1c2e --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id = optionalArg(args)
			return runStatus(o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return cmd
}

func runStatus(o *statusOptions) error {
	l, st, err := o.g.resolve(o.id)
	if err != nil {
		return err
	}
	info := infoOf(l, st)
	if o.json {
		return writeJSON(o.g.io.Out, info)
	}
	w := o.g.io.Out
	con := o.g.newConsole(l)
	fmt.Fprintf(w, "Session:   %s\n", info.ID)
	fmt.Fprintf(w, "Task:      %s\n", firstLine(info.Task, 100))
	fmt.Fprintf(w, "Status:    %s\n", info.Status)
	fmt.Fprintf(w, "Request:   %d\n", info.Sequence)
	if info.Outbox != "" {
		fmt.Fprintf(w, "Outbox:    %s\n", con.rel(info.Outbox))
	}
	fmt.Fprintf(w, "Workspace: %s\n", info.Workspace)
	fmt.Fprintf(w, "Updated:   %s\n", info.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	if p := info.Pending; p != nil {
		fmt.Fprintf(w, "Waiting:   approval of '%s' (%s)\n", firstLine(p.Command, 80), p.Reason)
		fmt.Fprintf(w, "           run 'courier approve %s' or 'courier deny %s'\n", info.ID, info.ID)
	}
	if info.Summary != "" {
		fmt.Fprintf(w, "Summary:   %s\n", indentAfterFirst(info.Summary, "           "))
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
