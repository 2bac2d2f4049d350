package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/policy"
)

// A run is what 'courier ops' carries out: the operations a program sent
// (the Agent Spaces protocol), as the one turn of a session of its own,
// recorded as every turn is: a run killed at any moment is finished
// exactly once by the next courier, one stopped at a question is resumed
// by its id, and log, diff and undo work on it.

// RunOptions say how a run starts: the front end its session records,
// the policy preset ("": the settings'), its task in 'courier sessions',
// and the name and hash of the operations message.
type RunOptions struct{ Protocol, Preset, Task, Name, Hash string }

// RunReport is where a run stands after StartRun or ResumeRun: the
// results so far, from the first this call produced; Paused when it waits
// for approval; Answered when this call answered Commands[From]'s.
type RunReport struct {
	ID       string
	Commands []command.Command
	Results  []command.Result
	From     int
	Paused   *history.Pending
	Answered bool
}

// StartRun carries out cmds as a new run on the runner's workspace; a
// question the approver does not answer pauses it.
func (r *Runner) StartRun(ctx context.Context, cmds []command.Command, opts RunOptions) (RunReport, error) {
	if opts.Preset != "" {
		if _, err := r.preset(opts.Preset); err != nil {
			return RunReport{}, err
		}
	}
	st, err := r.newState(opts.Task, opts.Protocol)
	if err != nil {
		return RunReport{}, err
	}
	st.Run, st.Preset = true, opts.Preset
	f, err := r.store.StageNew(st)
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return RunReport{}, fmt.Errorf("save session %s: %w", st.SessionID, err)
	}
	r.firstSnapshot(st)
	r.cfg.Reporter.SessionStarted(SessionStarted{Session: st.SessionID, Task: st.Task})
	s, err := r.Hold(st.SessionID, "courier ops")
	if err != nil {
		return RunReport{ID: st.SessionID}, err
	}
	defer s.Release()
	return s.runTurn(ctx, 0, func(eng *engine.Engine) (engine.Outcome, error) {
		return eng.Apply(ctx, s.st, engine.Input{Name: opts.Name, Hash: opts.Hash, Commands: cmds})
	})
}

// RunDecision answers the question a paused run waits on, of Operation
// ("": whichever it is).
type RunDecision struct {
	Operation, Reason string
	Approved          bool
}

// WrongOperationError: an answer named another operation.
type WrongOperationError struct{ Run, Waiting, Given string }

func (e *WrongOperationError) Error() string {
	return fmt.Sprintf("run %s waits for approval of operation %q, not %q", e.Run, e.Waiting, e.Given)
}

// NothingWaitsError: an answer (to operation Given) was given to a run
// stopped while it ran, which a resume without an answer finishes.
type NothingWaitsError struct{ Run, Given string }

func (e *NothingWaitsError) Error() string {
	what := "an approval"
	if e.Given != "" {
		what = fmt.Sprintf("approval of operation %q", e.Given)
	}
	return fmt.Sprintf("run %s does not wait for %s: it was stopped while it ran, so there is nothing to approve or deny yet; nothing was run", e.Run, what)
}

// AnswerNeededError: a run waiting for approval resumed without answer.
type AnswerNeededError struct{ Run, Operation string }

func (e *AnswerNeededError) Error() string {
	return fmt.Sprintf("run %s waits for approval of operation %q; give an answer to resume it", e.Run, e.Operation)
}

// NotRunError: the id names a chat session, not a run.
type NotRunError struct{ Session string }

func (e *NotRunError) Error() string {
	return fmt.Sprintf("%s is a chat session, not a run of 'courier ops'", e.Session)
}

// ResumeRun carries out the rest of run id. A run waiting for approval
// needs d, the answer to its command; one stopped while it ran (killed)
// is finished with d nil, and refuses an answer. opID names a command's
// operation (the protocol's ids).
func (r *Runner) ResumeRun(ctx context.Context, id string, d *RunDecision, opID func(command.Command, int) string) (RunReport, error) {
	st, err := r.store.Load(id)
	if err != nil {
		return RunReport{}, err
	}
	if !st.Run {
		return RunReport{}, &NotRunError{Session: id}
	}
	s, err := r.Hold(id, "courier ops resume")
	if err != nil {
		return RunReport{ID: id}, err
	}
	defer s.Release()
	begin, unfinished, err := r.store.Unfinished(s.st)
	if err != nil {
		return RunReport{ID: id}, err
	}
	waits := s.st.Pending != nil
	if waits {
		// An answer recorded before the run was killed was given.
		if waits, err = r.unanswered(id, *s.st.Pending); err != nil {
			return RunReport{ID: id}, err
		}
	}
	if !waits {
		switch {
		case !unfinished:
			return RunReport{ID: id}, &NotWaitingError{Session: id}
		case d != nil:
			return RunReport{ID: id}, &NothingWaitsError{Run: id, Given: d.Operation}
		}
		return s.runTurn(ctx, 0, func(eng *engine.Engine) (engine.Outcome, error) {
			return eng.Resume(ctx, s.st)
		})
	}
	p := *s.st.Pending
	if p.Index >= len(begin.Commands) {
		return RunReport{ID: id}, fmt.Errorf("run %s: its journal has no command %d", id, p.Index+1)
	}
	c, err := begin.Command(p.Index)
	if err != nil {
		return RunReport{ID: id}, err
	}
	want := opID(c, p.Index)
	switch {
	case d == nil:
		return RunReport{ID: id}, &AnswerNeededError{Run: id, Operation: want}
	case d.Operation != "" && want != d.Operation:
		return RunReport{ID: id}, &WrongOperationError{Run: id, Waiting: want, Given: d.Operation}
	}
	if err := s.journalDecision(decisionNote{Sequence: p.Sequence, Index: p.Index, Approved: d.Approved, Reason: d.Reason}, false); err != nil {
		return RunReport{ID: id}, err
	}
	rep, err := s.runTurn(ctx, p.Index, func(eng *engine.Engine) (engine.Outcome, error) {
		return eng.Resume(ctx, s.st)
	})
	rep.Answered = true
	return rep, err
}

// unanswered reports whether question p of run id has no decision.
func (r *Runner) unanswered(id string, p history.Pending) (bool, error) {
	t, err := r.store.ReadTurn(id, p.Sequence)
	if err != nil {
		return false, err
	}
	for _, rec := range t.Records {
		if rec.Kind == history.RecordDecision && rec.Index == p.Index {
			return false, nil
		}
	}
	return true, nil
}

// runTurn carries out the run's turn; a question is a pause, no error.
func (s *Session) runTurn(ctx context.Context, from int, start func(*engine.Engine) (engine.Outcome, error)) (RunReport, error) {
	out, err := s.turn(ctx, start)
	rep := RunReport{ID: s.st.SessionID, Commands: out.Commands, Results: out.Results, From: from}
	if waiting, ok := errors.AsType[*WaitingError](err); ok {
		rep.Paused = &waiting.Pending
		return rep, nil
	}
	return rep, interrupted(ctx, s.st.SessionID, err)
}

// preset returns the policy of a run's preset.
func (r *Runner) preset(name string) (*policy.Policy, error) {
	if r.cfg.Presets == nil {
		return nil, fmt.Errorf("no policy preset %q here", name)
	}
	return r.cfg.Presets(name)
}
