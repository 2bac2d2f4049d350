package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/termtext"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/agentrun"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

// Exit statuses beyond 0 (success) and 1 (error).
const (
	ExitUsage = 2
	// ExitWaiting means the session waits for the person's approval.
	ExitWaiting = 3
	// ExitStopped is Ctrl-C, as shells report it.
	ExitStopped = 130
)

// This file is the one place where errors become what the person reads:
// "courier: error: ..." (or a calm "courier: ..." for an ending that is not
// a failure), a "courier: hint: ..." with the next step, and the exit
// status. Lower packages return typed errors and never word advice.

// usageError is a mistake in how courier was called: exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err}
}

// hinted carries a hint decided by the command itself.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hinted{err: err, hint: hint}
}

// quietError is an ending that is not a failure, printed without "error:".
type quietError string

func (q quietError) Error() string { return string(q) }

// explained is how an error is shown.
type explained struct {
	msg, hint string
	code      int
	quiet     bool
}

// explain turns an error into what the person reads, with the exit status.
func explain(err error) explained {
	e := explained{msg: strings.TrimSuffix(err.Error(), "."), code: 1}
	if errors.As(err, new(*usageError)) {
		e.code = ExitUsage
	} else if waiting, ok := errors.AsType[*runner.WaitingError](err); ok {
		e.quiet, e.code = true, ExitWaiting
		e.msg = fmt.Sprintf("session %s waits for approval of %s (%s)", waiting.Session, termtext.Command(waiting.Pending.Command, waiting.Pending.Env), waiting.Pending.Reason)
		e.hint = fmt.Sprintf("run 'courier approve %s' to run it or 'courier deny %s' to refuse it", waiting.Session, waiting.Session)
	} else if stopped, ok := errors.AsType[*runner.InterruptedError](err); ok {
		e.quiet, e.code = true, ExitStopped
		e.msg = fmt.Sprintf("stopped; run 'courier watch %s' to go on", stopped.Session)
	} else if errors.As(err, new(*runner.UnappliedError)) {
		e.quiet = true
	} else if errors.Is(err, context.Canceled) {
		e.quiet, e.code, e.msg = true, ExitStopped, "stopped"
	} else if errors.As(err, new(quietError)) {
		e.quiet = true
	} else if complete, ok := errors.AsType[*runner.CompleteError](err); ok {
		e.hint = fmt.Sprintf("give it a follow-up task with 'courier continue %s TASK', or start a new one with 'courier new'", complete.Session)
	} else if nothingYet, ok := errors.AsType[*runner.NothingWaitsError](err); ok {
		e.hint = fmt.Sprintf("finish it with 'courier ops resume %s' (no answer); if it then stops at an approval, answer that", nothingYet.Run)
	} else if noAnswer, ok := errors.AsType[*runner.AnswerNeededError](err); ok {
		e.code = ExitUsage
		e.hint = fmt.Sprintf("courier ops resume %s --approve %s, or --deny %s [--reason TEXT]", noAnswer.Run, noAnswer.Operation, noAnswer.Operation)
	} else if wrongOp, ok := errors.AsType[*runner.WrongOperationError](err); ok {
		e.hint = fmt.Sprintf("courier ops resume %s --approve %s, or --deny %s", wrongOp.Run, wrongOp.Waiting, wrongOp.Waiting)
	} else if notRun, ok := errors.AsType[*runner.NotRunError](err); ok {
		e.hint = fmt.Sprintf("answer a chat session with 'courier approve %s' or 'courier deny %s'", notRun.Session, notRun.Session)
	} else if system, ok := errors.AsType[*runner.SystemError](err); ok {
		e.hint = fmt.Sprintf("make room on the disk, then 'courier process' finishes the turn of session %s from that command; nothing before it is done again", system.Session)
	} else if errors.As(err, new(*runner.NotWaitingError)) {
		e.hint = "'courier status' shows what a session waits for"
	} else if unfinished, ok := errors.AsType[*runner.UnfinishedError](err); ok {
		e.hint = "finish that reply first: run 'courier process' or 'courier watch'"
		switch {
		case unfinished.Run && unfinished.Approval:
			e.hint = fmt.Sprintf("the run waits for approval: answer it with 'courier ops resume %s --approve OP_ID' or '--deny OP_ID'", unfinished.Session)
		case unfinished.Run:
			e.hint = fmt.Sprintf("finish the run first: 'courier ops resume %s'", unfinished.Session)
		case unfinished.Approval:
			e.hint = fmt.Sprintf("it waits for your decision: run 'courier approve %s' or 'courier deny %s'", unfinished.Session, unfinished.Session)
		}
	} else if errors.As(err, new(*runner.BusyTurnError)) {
		e.hint = "finish that reply first with 'courier process'"
	} else if errors.As(err, new(*runner.OtherWorkspaceError)) {
		e.hint = "leave out --workspace to resume it, or start a new session for the other folder"
	} else if wsErr, ok := errors.AsType[*runner.WorkspaceError](err); ok {
		e.hint = "create it, or point --workspace at your project folder"
		if wsErr.Session != "" {
			e.hint = "the session's workspace folder must exist"
		}
	} else if errors.As(err, new(runner.EmptyTaskError)) {
		e.code = ExitUsage
		e.hint = `describe the task, e.g. courier new "add a --verbose flag"`
	} else if errors.As(err, new(*runner.NothingToUndoError)) {
		e.hint = "'courier log' lists the turns and what each changed"
	} else if locked, ok := errors.AsType[*history.LockedError](err); ok {
		e.hint = "wait for that process to finish, or stop it (Ctrl-C in its terminal)"
		if locked.Holder != nil && strings.HasPrefix(locked.Holder.Doing, "waiting for approval") {
			e.hint = fmt.Sprintf("answer its question there, or run 'courier approve %s' or 'courier deny %s'", locked.Session, locked.Session)
		}
	} else if errors.As(err, new(*history.InvalidIDError)) || errors.Is(err, history.ErrNotFound) {
		e.hint = "run 'courier sessions' to list the sessions"
	} else if errors.Is(err, runner.ErrNoSession) {
		e.msg = "no incomplete session"
		e.hint = `start one with 'courier new "TASK"', or name a session id`
	} else if errors.As(err, new(*history.CorruptError)) {
		e.hint = "courier leaves it as it is; restore it from a backup or move it aside to forget the session"
	} else if errors.As(err, new(*reply.TooLargeError)) {
		e.hint = "ask the LLM for a shorter answer, or raise max_reply in courier.toml"
	} else if errors.As(err, new(*reply.EchoError)) {
		e.hint = "paste the request into the chat and save the chat's answer instead"
	} else if errors.As(err, new(*reply.NotTextError)) {
		e.hint = "save the LLM's answer as plain text"
	} else if errors.Is(err, history.ErrPruned) {
		e.hint = "raise snapshot_budget to keep more turns undoable"
	} else if errors.As(err, new(*runner.SnapshotError)) {
		e.hint = "'courier log' shows what each turn changed"
	} else if notDone, ok := errors.AsType[*runner.NotCompleteError](err); ok {
		e.hint = fmt.Sprintf("it is still under way: talk to the LLM with 'courier say %s TEXT'", notDone.Session)
	} else if layout, ok := errors.AsType[*runner.LayoutError](err); ok {
		e.hint = "keep courier's root outside the project, e.g. courier --root ~/courier-work --workspace " + layout.Workspace
		if layout.Home {
			e.hint = "run courier in a project folder inside your home (cd ~/project), or point --workspace at one"
		}
	} else if setup, ok := errors.AsType[*agent.SetupError](err); ok {
		e.hint = setup.Fix
	} else if limit, ok := errors.AsType[*agentrun.LimitError](err); ok {
		e.quiet = true
		e.hint = fmt.Sprintf("raise %s in the [agent] table (or its flag) and run 'courier watch' to go on, or answer by hand: 'courier watch --agent \"\"'", limit.Setting)
	}
	if h, ok := errors.AsType[*hinted](err); ok {
		e.hint = h.hint
	}
	return e
}

// report prints an error and returns the exit status.
func report(w io.Writer, err error) int {
	if status, ok := errors.AsType[exitStatus](err); ok {
		return int(status)
	}
	if batch, ok := errors.AsType[*runner.BatchError](err); ok {
		for _, e := range batch.Errs {
			report(w, e)
		}
		return 1
	}
	e := explain(err)
	// An error may quote a reply or a path a command made: safe for the
	// terminal like everything else.
	fmt.Fprintf(w, "courier: %s%s\n", map[bool]string{false: "error: "}[e.quiet], termtext.Safe(e.msg))
	if e.hint != "" {
		fmt.Fprintf(w, "courier: hint: %s\n", termtext.Safe(e.hint))
	}
	return e.code
}
