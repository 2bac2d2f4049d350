// Package agentrun makes an agent (a coding CLI, a local LLM program, an
// OpenAI-compatible endpoint) the source of a session's replies: each
// request is sent as a run of the conductor-loop agent protocol, in the
// session's runs folder, and the unattended loop stops at its limits.
package agentrun

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

// Options set up the agent as a source.
type Options struct {
	Agent      agent.Agent
	Model      string // shown with the agent's name ("" for its default)
	SessionDir string // the session's folder; runs go into SessionDir/runs
	Workspace  string // the session's workspace, where the agent never runs
	MaxTurns   int    // replies the agent may give in this run of courier (0: no limit)
	Restarts   agent.RestartPolicy
	TimeBudget time.Duration   // see agent.Runs
	Reporter   runner.Reporter // hears about each run as it happens
}

// LimitError: the unattended loop reached one of its limits; the session
// is left as it is, ready for the next request.
type LimitError struct {
	Setting string // max_turns, time_budget
	Limit   string
	Used    string // what was used of it, if more than the limit tells
}

func (e *LimitError) Error() string {
	used := ""
	if e.Used != "" {
		used = ", " + e.Used
	}
	return fmt.Sprintf("the agent reached its limit (%s = %s%s); the session waits for its next reply", e.Setting, e.Limit, used)
}

// Source is an agent giving a session its replies.
type Source struct {
	o     Options
	runs  agent.Runs
	turns int
}

// New returns the source of a held session (holding it closed the runs a
// crashed courier left open).
func New(o Options) *Source {
	return &Source{o: o, runs: agent.Runs{SessionDir: o.SessionDir, TimeBudget: o.TimeBudget}}
}

// Where says where replies come from, for the person.
func (s *Source) Where() string {
	if s.o.Model != "" {
		return fmt.Sprintf("from the %s agent (model %s)", s.o.Agent.Type(), s.o.Model)
	}
	return fmt.Sprintf("from the %s agent", s.o.Agent.Type())
}

// Next implements runner.Source: it sends the request as a run (with
// restarts) and returns the run's output as the reply.
func (s *Source) Next(ctx context.Context, req runner.Request) (reply.Reply, error) {
	if s.o.MaxTurns > 0 && s.turns >= s.o.MaxTurns {
		return reply.Reply{}, &LimitError{Setting: "max_turns", Limit: fmt.Sprint(s.o.MaxTurns)}
	}
	r, err := s.runs.SendWithRestarts(ctx, s.o.Agent, agent.Request{
		Prompt:    req.Text,
		Workspace: s.o.Workspace,
		ProjectID: filepath.Base(s.o.Workspace),
		TaskID:    req.Session,
		Observer:  s.observe,
	}, s.o.Restarts)
	var budget *agent.BudgetError
	switch {
	case err != nil && ctx.Err() != nil:
		return reply.Reply{}, ctx.Err()
	case errors.As(err, &budget):
		spent := budget.Spent.Round(100 * time.Millisecond)
		if budget.Spent < time.Second {
			spent = budget.Spent.Round(time.Millisecond)
		}
		return reply.Reply{}, &LimitError{Setting: "time_budget", Limit: budget.Budget.String(), Used: fmt.Sprintf("%s spent on this session", spent)}
	case err != nil:
		return reply.Reply{}, err
	}
	s.turns++
	rep, err := reply.New(agent.ReplyName(r.RunID), r.Text, req.MaxReply, req.FrontEnd)
	if err != nil {
		// The run folder keeps what the agent said; the next turn asks again.
		return reply.Reply{}, &runner.SetAsideError{Err: err, MovedTo: r.Path}
	}
	return rep, nil
}

// Settle implements runner.Source: the run folder is the reply's record.
func (s *Source) Settle(string, string, runner.Settlement) (string, error) { return "", nil }

// observe passes the agent's events on as the runner's.
func (s *Source) observe(e agent.Event) {
	s.o.Reporter.AgentRun(runner.AgentRun{Kind: runner.RunKind(e.Kind), RunID: e.RunID, Agent: e.Agent, Model: e.Model,
		Elapsed: e.Elapsed, Bytes: e.Bytes, Tokens: e.Tokens, Attempt: e.Attempt, Wait: e.Wait, Status: e.Status, Err: e.Err})
}
