package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/shell"
)

// The runner's errors are typed so that the command line alone words
// them, suggests what to do and picks the exit status.

// ErrNoSession: no session to work on (none yet, or none incomplete).
var ErrNoSession = errors.New("no session")

// ErrExhausted is returned by a source with no more replies to give.
var ErrExhausted = errors.New("no more replies")

// CompleteError: the session is complete; it takes no reply.
type CompleteError struct{ Session string }

func (e *CompleteError) Error() string { return fmt.Sprintf("session %s is complete", e.Session) }

// WaitingError: the session waits for the person's decision on a command.
type WaitingError struct {
	Session string
	Pending history.Pending
}

func (e *WaitingError) Error() string {
	return fmt.Sprintf("session %s waits for approval of '%s' (%s)", e.Session, e.Pending.Command, e.Pending.Reason)
}

// NotWaitingError: a decision was given but no command waits for one.
type NotWaitingError struct{ Session string }

func (e *NotWaitingError) Error() string {
	return fmt.Sprintf("session %s is not waiting for an approval", e.Session)
}

// UnfinishedError: another turn is unfinished (waiting for Approval, Run).
type UnfinishedError struct {
	Session, Reply string
	Approval, Run  bool
}

func (e *UnfinishedError) Error() string {
	return fmt.Sprintf("session %s is still applying %s", e.Session, e.Reply)
}

// RefusedError: a reply applied before (Duplicate) or of another request.
type RefusedError struct {
	Reply, Reason string
	Duplicate     bool
}

func (e *RefusedError) Error() string { return e.Reason }

// SkippedError is returned by a source for a reply of another session,
// or (Why) a file that is no reply at all.
type SkippedError struct {
	Reply, Session string
	Hash, Why      string // Hash when it could be read
}

func (e *SkippedError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("%s is not a reply: %s", e.Reply, e.Why)
	}
	return fmt.Sprintf("reply %s is for session %s", e.Reply, e.Session)
}

// SetAsideError: a reply that can never be applied, moved away.
type SetAsideError struct {
	Reply   string
	Err     error
	MovedTo string
}

func (e *SetAsideError) Error() string { return e.Err.Error() }
func (e *SetAsideError) Unwrap() error { return e.Err }

// WorkspaceError: the session's workspace folder cannot be used.
type WorkspaceError struct {
	Session, Path string
	Err           error
}

func (e *WorkspaceError) Error() string {
	if e.Session == "" {
		return fmt.Sprintf("workspace %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("session %s: workspace %s: %v", e.Session, e.Path, e.Err)
}

func (e *WorkspaceError) Unwrap() error { return e.Err }

// OtherWorkspaceError: the session works on another folder than Given.
type OtherWorkspaceError struct{ Session, Workspace, Given string }

func (e *OtherWorkspaceError) Error() string {
	return fmt.Sprintf("session %s works on %s, not on %s", e.Session, e.Workspace, e.Given)
}

// EmptyTaskError: a session was started without a task.
type EmptyTaskError struct{}

func (EmptyTaskError) Error() string { return "the task is empty" }

// NothingToUndoError: no turn with changes is left to undo.
type NothingToUndoError struct{ Session string }

func (e *NothingToUndoError) Error() string {
	return fmt.Sprintf("session %s has no file changes left to undo", e.Session)
}

// InterruptedError: Ctrl-C stopped work on a session; the next run goes on.
type InterruptedError struct {
	Session string
	Err     error
}

func (e *InterruptedError) Error() string { return fmt.Sprintf("session %s: stopped", e.Session) }
func (e *InterruptedError) Unwrap() error { return e.Err }

// UnappliedError: Count replies were not applied (each was reported).
type UnappliedError struct{ Count int }

func (e *UnappliedError) Error() string {
	if e.Count == 1 {
		return "the reply was not applied"
	}
	return fmt.Sprintf("%d replies were not applied", e.Count)
}

// NewID is a new session id, as runs are named: for a message that could
// not run, which makes no session.
func NewID() string { return newID() }

// interrupted marks an error of ctx ending as an interruption of id.
func interrupted(ctx context.Context, id string, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return &InterruptedError{Session: id, Err: err}
	}
	return err
}

// EmptyReplyError: a reply with nothing in it, which uses no turn.
type EmptyReplyError struct{ Reply string }

func (e *EmptyReplyError) Error() string {
	return fmt.Sprintf("reply %s is empty (no command, no text); it was set aside and did not use up a turn", e.Reply)
}

// What the command line, kept off the engine and the shell, needs of them.
type (
	BusyTurnError = engine.BusyTurnError
	SystemError   = engine.SystemError
	UndoReport    = history.Report
)

// AllowedVars are the variables of courier's environment commands get;
// DefaultVars those set for every command (NAME=value).
func AllowedVars() []string { return shell.AllowedVars() }
func DefaultVars() []string { return shell.DefaultVars() }
