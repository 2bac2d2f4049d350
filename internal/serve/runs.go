package serve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/runner"
)

// The Agent Spaces runtime over HTTP: what 'courier ops' and 'courier ops
// resume' do, with the same validation, policy, sandbox and journal, each
// answered with the events message 'courier ops' prints.

// startRun is POST /v1/runs (?policy=PRESET): an operations message,
// carried out as a run.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	preset := r.URL.Query().Get("policy")
	if _, err := agentspaces.Preset(preset, policy.Config{}); err != nil {
		s.fail(w, r, badRequest(err.Error()+": ?policy=standard, permissive or restrictive"))
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	cmds, err := agentspaces.Decode(data)
	if err != nil {
		// Not a message that can run: no run is made.
		s.events200(w, agentspaces.Events(runner.NewID(), agentspaces.Outcome{Err: err}, time.Now()))
		return
	}
	rr, _, err := s.runner("")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := rr.StartRun(s.ctx, cmds, runner.RunOptions{Protocol: agentspaces.ChatName, Preset: preset,
		Name: "POST /v1/runs", Hash: runner.Hash(data), Task: agentspaces.RunTask(cmds)})
	if err != nil && rep.Commands == nil {
		rep.Commands = cmds
	}
	s.events200(w, agentspaces.RunEvents(rep, err, time.Now()))
}

// resumeRun is POST /v1/runs/{id}/resume: the answer to the approval the
// run waits on ({"approval": {...}}, or the userMessage form), or an
// empty body to finish a run that was stopped while it ran.
func (s *Server) resumeRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	data, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var d *runner.RunDecision
	if len(bytes.TrimSpace(data)) > 0 {
		a, err := agentspaces.DecodeApproval(data)
		if err != nil {
			s.fail(w, r, badRequest(err.Error()))
			return
		}
		d = &runner.RunDecision{Operation: a.OperationID, Approved: a.Decision == agentspaces.Approved, Reason: a.Reason}
	}
	defer s.hold(id)()
	rr, _, err := s.runner(id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := rr.ResumeRun(s.ctx, id, d, agentspaces.ApprovalID)
	if err != nil && rep.Commands == nil {
		s.fail(w, r, err)
		return
	}
	s.events200(w, agentspaces.RunEvents(rep, err, time.Now()))
}

// runStatus is GET /v1/runs/{id}: the run's status, with the
// approvalRequired event it waits on; "running" while a courier carries it
// out, "interrupted" when one was stopped while it did (resume finishes
// it).
func (s *Server) runStatus(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rr, _, err := s.runner(id)
	var info runner.Info
	if err == nil {
		info, err = rr.Status(id)
	}
	if err == nil && !info.Run {
		err = &runner.NotRunError{Session: id}
	}
	if err != nil {
		s.fail(w, r, err)
		return
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
	s.events200(w, m)
}

// events200 writes an events message: whatever its status, the request
// was carried out.
func (s *Server) events200(w http.ResponseWriter, m agentspaces.EventsMessage) {
	text, err := agentspaces.FormatEvents(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, text)
}
