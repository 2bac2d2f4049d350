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
// (the Agent Spaces protocol), as the one turn of a session of its own.
// It is journaled as every turn is, so a run killed at any moment is
// finished exactly once by the next courier that takes it, and a run that
// stopped at a question is resumed from another process, after any time,
// by its id (the session's). Once its turn is done the session is
// complete; 'courier log', 'diff' and 'undo' work on it as on any other.

// RunOptions say how a run starts.
type RunOptions struct {
	// Protocol names the front end the run's session records.
	Protocol string
	// Preset names the policy preset its commands are checked by; "" is
	// the settings' policy.
	Preset string
	// Task describes the run in 'courier sessions'.
	Task string
	// Name and Hash identify the operations message in the journal.
	Name, Hash string
}

// RunReport is where a run stands after StartRun or ResumeRun.
type RunReport struct {
	ID string
	// Commands are the run's commands; Results what each came to so far.
	Commands []command.Command
	Results  []command.Result
	// From is the first command whose result this call produced.
	From int
	// Paused is set when the run waits for approval of
	// Commands[Paused.Index].
	Paused *history.Pending
	// Answered is set when this call answered the approval Commands[From]
	// waited on.
	Answered bool
}

// StartRun carries out cmds as a new run on the runner's workspace. A
// command that needs approval pauses the run (RunReport.Paused) unless
// the approver answers.
func (r *Runner) StartRun(ctx context.Context, cmds []command.Command, opts RunOptions) (RunReport, error) {
	fe, err := r.FrontEnd(opts.Protocol)
	if err != nil {
		return RunReport{}, err
	}
	if opts.Preset != "" {
		if _, err := r.preset(opts.Preset); err != nil {
			return RunReport{}, err
		}
	}
	ws, err := r.workspaceDir()
	if err != nil {
		return RunReport{}, err
	}
	st := r.newState(opts.Task, ws)
	st.Run, st.Preset = true, opts.Preset
	if fe != r.cfg.FrontEnds[0] {
		st.Protocol = fe.Name()
	}
	if err := r.store.Create(st); err != nil {
		return RunReport{}, err
	}
	r.firstSnapshot(st)
	r.report(SessionStarted{Session: st.SessionID, Task: st.Task})
	s, err := r.Hold(st.SessionID, "courier ops")
	if err != nil {
		return RunReport{ID: st.SessionID}, err
	}
	defer s.Release()
	return s.runTurn(ctx, 0, func(eng *engine.Engine) (engine.Outcome, error) {
		return eng.Apply(ctx, s.st, engine.Input{Name: opts.Name, Hash: opts.Hash, Commands: cmds})
	})
}

// RunDecision answers the question a paused run waits on.
type RunDecision struct {
	// Operation is the id of the operation the answer is for; it must be
	// the one the run waits on ("": whichever it is).
	Operation string
	Approved  bool
	Reason    string
}

// WrongOperationError: an answer named another operation than the one the
// run waits on.
type WrongOperationError struct {
	Run, Waiting, Given string
}

func (e *WrongOperationError) Error() string {
	return fmt.Sprintf("run %s waits for approval of operation %q, not %q", e.Run, e.Waiting, e.Given)
}

// NothingWaitsError: an answer was given to a run that waits on no
// approval: it was stopped while it ran, and is finished by a resume
// without an answer.
type NothingWaitsError struct {
	Run string
	// Given is the operation the answer named, "" for none.
	Given string
}

func (e *NothingWaitsError) Error() string {
	what := "an approval"
	if e.Given != "" {
		what = fmt.Sprintf("approval of operation %q", e.Given)
	}
	return fmt.Sprintf("run %s does not wait for %s: it was stopped while it ran, so there is nothing to approve or deny yet; nothing was run", e.Run, what)
}

// AnswerNeededError: a run that waits for approval was resumed without an
// answer.
type AnswerNeededError struct {
	Run, Operation string
}

func (e *AnswerNeededError) Error() string {
	return fmt.Sprintf("run %s waits for approval of operation %q; give an answer to resume it", e.Run, e.Operation)
}

// NotRunError: the id names a chat session, not a run.
type NotRunError struct{ Session string }

func (e *NotRunError) Error() string {
	return fmt.Sprintf("%s is a chat session, not a run of 'courier ops'", e.Session)
}

// ResumeRun resumes run id and carries out the rest of its commands. A run
// that waits for approval needs d, the answer: approved, the waiting
// command runs first; denied, it is refused; the others run either way. A
// run that was stopped while it ran (killed) waits on nothing: it is
// finished with d nil, exactly once, and may then stop at a question of
// its own, which the next resume answers; an answer given to it is refused
// before anything runs. opID names the operation given the index of a
// command in the run (the protocol's operation ids).
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
		// An answer journaled before the run was killed has been given:
		// the run no longer waits, whatever its state says.
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
	want := opID(begin.Commands[p.Index], p.Index)
	switch {
	case d == nil:
		return RunReport{ID: id}, &AnswerNeededError{Run: id, Operation: want}
	case d.Operation != "" && want != d.Operation:
		return RunReport{ID: id}, &WrongOperationError{Run: id, Waiting: want, Given: d.Operation}
	}
	answer := Deny
	if d.Approved {
		answer = Approve
	}
	if err := s.journalDecision(pendingOf(s.st).decided(Decision{Answer: answer, Reason: d.Reason}), false); err != nil {
		return RunReport{ID: id}, err
	}
	rep, err := s.runTurn(ctx, p.Index, func(eng *engine.Engine) (engine.Outcome, error) {
		return eng.Resume(ctx, s.st)
	})
	rep.Answered = true
	return rep, err
}

// unanswered reports whether the question p of run id still waits for an answer: no
// decision on it is in its turn's journal.
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

// runTurn carries out the run's turn and reports where it stands; a
// question without an answer is not an error but a pause.
func (s *Session) runTurn(ctx context.Context, from int, start func(*engine.Engine) (engine.Outcome, error)) (RunReport, error) {
	out, err := s.turnOutcome(ctx, start)
	rep := RunReport{ID: s.st.SessionID, Commands: out.Commands, Results: out.Results, From: from}
	var waiting *WaitingError
	if errors.As(err, &waiting) {
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
