package agentspaces

import (
	"fmt"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
)

// RunEvents is the events message of where a run stands, as 'courier ops'
// prints it and POST /v1/runs answers: err, when set, is the failure that
// stopped the run (its error event).
func RunEvents(rep runner.RunReport, err error, now time.Time) EventsMessage {
	o := Outcome{Commands: rep.Commands, Results: rep.Results, From: rep.From, Answered: rep.Answered, Err: err}
	if rep.Paused != nil {
		o.Paused = &Pause{Index: rep.Paused.Index, Reason: rep.Paused.Reason, Rule: rep.Paused.Rule}
	}
	return Events(rep.ID, o, now)
}

// RunTask names a run in 'courier sessions': its first message, or what
// it does.
func RunTask(cmds []command.Command) string {
	for _, c := range cmds {
		if c.Type == command.Message || c.Type == command.Done {
			return "ops: " + human.FirstLine(c.Text, 80)
		}
	}
	return fmt.Sprintf("ops: %d operations", len(cmds))
}
