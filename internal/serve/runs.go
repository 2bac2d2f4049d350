package serve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/runner"
)

// The Agent Spaces runtime over HTTP: 'courier ops' and 'courier ops
// resume', each answered with the events message 'courier ops' prints.

// startRun is POST /v1/runs (?policy=PRESET): an operations message,
// carried out as a run.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) error {
	preset := r.URL.Query().Get("policy")
	if _, err := agentspaces.Preset(preset, policy.Config{}); err != nil {
		return badRequest(err.Error() + ": ?policy=standard, permissive or restrictive")
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	cmds, err := agentspaces.Decode(data)
	if err != nil {
		// Not a message that can run: no run is made.
		return events200(w, agentspaces.Events(runner.NewID(), agentspaces.Outcome{Err: err}, time.Now()))
	}
	rr, _ := s.runner("")
	rep, err := rr.StartRun(s.ctx, cmds, runner.RunOptions{Protocol: agentspaces.ChatName, Preset: preset,
		Name: "POST /v1/runs", Hash: history.Hash(string(data)), Task: RunTask(cmds)})
	if err != nil && rep.Commands == nil {
		rep.Commands = cmds
	}
	return events200(w, RunEvents(rep, err, time.Now()))
}

// resumeRun is POST /v1/runs/{id}/resume: the answer to the approval the
// run waits on, or an empty body to finish a run stopped while it ran.
func (s *Server) resumeRun(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var d *runner.RunDecision
	if len(bytes.TrimSpace(data)) > 0 {
		a, err := agentspaces.DecodeApproval(data)
		if err != nil {
			return badRequest(err.Error())
		}
		d = &runner.RunDecision{Operation: a.OperationID, Approved: a.Decision == agentspaces.Approved, Reason: a.Reason}
	}
	defer s.hold(id)()
	rr, _ := s.runner(id)
	rep, err := rr.ResumeRun(s.ctx, id, d, agentspaces.ApprovalID)
	if err != nil && rep.Commands == nil {
		return err
	}
	return events200(w, RunEvents(rep, err, time.Now()))
}

// runStatus is GET /v1/runs/{id}: the run's status, with the
// approvalRequired event it waits on, "running" or "interrupted".
func (s *Server) runStatus(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rr, _ := s.runner(id)
	info, err := rr.Status(id)
	if err == nil && !info.Run {
		err = &runner.NotRunError{Session: id}
	}
	if err != nil {
		return err
	}
	m := agentspaces.EventsMessage{ProtocolVersion: agentspaces.ProtocolVersion, RunID: id, Status: agentspaces.StatusCompleted, Events: []agentspaces.Event{}}
	switch {
	case info.Pending != nil && info.PendingCommand != nil:
		m.Status = agentspaces.StatusAwaitingApproval
		p := agentspaces.Pause{Index: info.Pending.Index, Reason: info.Pending.Reason, Rule: info.Pending.Rule}
		m.Events = append(m.Events, agentspaces.ApprovalEvent(*info.PendingCommand, p, time.Now()))
	case info.State == runner.StateApplying && info.Holder != nil:
		m.Status = "running"
	case !info.Complete:
		m.Status = "interrupted"
	}
	return events200(w, m)
}

// events200 writes an events message: whatever its status, the request
// was carried out.
func events200(w http.ResponseWriter, m agentspaces.EventsMessage) error {
	text, err := agentspaces.FormatEvents(m)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = io.WriteString(w, text)
	return err
}

// RunEvents is the events message of where a run stands, as 'courier ops'
// prints it; err is the failure that stopped it.
func RunEvents(rep runner.RunReport, err error, now time.Time) agentspaces.EventsMessage {
	o := agentspaces.Outcome{Commands: rep.Commands, Results: rep.Results, From: rep.From, Answered: rep.Answered, Err: err}
	if rep.Paused != nil {
		o.Paused = &agentspaces.Pause{Index: rep.Paused.Index, Reason: rep.Paused.Reason, Rule: rep.Paused.Rule}
	}
	return agentspaces.Events(rep.ID, o, now)
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
