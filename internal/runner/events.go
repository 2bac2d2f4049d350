package runner

import (
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
)

// Reporter is told what happens in a session, as it happens, one method
// per kind of event, so that a reporter missing a new kind does not
// build. The methods must not block for long.
type Reporter interface {
	SessionStarted(SessionStarted)
	RequestWritten(RequestWritten)
	WaitingForReply(WaitingForReply)
	ReplyTaken(ReplyTaken)
	ReplySkipped(ReplySkipped)
	ReplySetAside(ReplySetAside)
	ReplyRefused(ReplyRefused)
	TurnResumed(TurnResumed)
	CommandStarted(CommandStarted)
	CommandFinished(CommandFinished)
	ApprovalNeeded(ApprovalNeeded)
	ApprovalDecided(ApprovalDecided)
	TurnEnded(TurnEnded)
	TurnUndone(TurnUndone)
	AgentRun(AgentRun)
	Warning(Warning)
}

// SessionStarted: a new session was created.
type SessionStarted struct{ Session, Task string }

// RequestWritten: a request waits to be answered. Parts is nil when read
// back from its file; Rewritten: a missing (Damaged: changed) request was
// written again; Resumed: a session is taken up again; Updated: written
// again with the person's message.
type RequestWritten struct {
	Session                              string
	Sequence                             int
	Path, Text                           string
	Size                                 int64
	Tokens                               int
	Parts                                []frontend.Part
	Rewritten, Damaged, Resumed, Updated bool
}

// WaitingForReply: the runner waits for a reply From ("in inbox/").
type WaitingForReply struct {
	Session, From string
	Sequence      int
}

// ReplyTaken: a reply is about to be applied.
type ReplyTaken struct {
	Session, Name string
	Sequence      int
}

// ReplySkipped: a reply of another session, or (Why) no reply; left alone.
type ReplySkipped struct{ Name, Session, Why string }

// ReplySetAside: a reply could never be used, and was moved away.
type ReplySetAside struct {
	Name, MovedTo string
	Err           error
}

// ReplyRefused: a reply applied before, or answering another request.
type ReplyRefused struct {
	Name, Reason, MovedTo string
	Duplicate             bool
}

// TurnResumed: an unfinished turn is being finished; Agent gave its reply.
type TurnResumed struct {
	Session       string
	Sequence      int
	Reply, Agent  string
	AfterApproval bool
}

// CommandStarted: a command is about to run (after any approval).
type CommandStarted struct {
	Index   int
	Command command.Command
}

// CommandFinished: a command's result.
type CommandFinished struct {
	Index   int
	Command command.Command
	Result  command.Result
}

// ApprovalNeeded: a command waits for the person's decision.
type ApprovalNeeded = Question

// ApprovalDecided: the person answered, here or in another terminal.
type ApprovalDecided struct {
	Session, Command, Reason string
	Approved, All, Elsewhere bool
}

// TurnEnded: a turn was committed.
type TurnEnded struct {
	Session, Summary string
	Sequence         int
	Commands         []command.Command
	Results          []command.Result
	Complete         bool
}

// TurnUndone: the changes of a turn were reverted.
type TurnUndone struct {
	Session string
	Report  UndoReport
}

// AgentRun: a request sent to an agent, as it happens.
type AgentRun struct {
	Kind                        RunKind
	RunID, Agent, Model, Status string
	Elapsed, Wait               time.Duration
	Bytes                       int64
	Tokens, Attempt             int
	Err                         error
}

// RunKind says what an AgentRun reports.
type RunKind string

// The kinds of AgentRun.
const (
	RunStarted  RunKind = "start"
	RunProgress RunKind = "progress"
	RunRetry    RunKind = "retry"
	RunRestart  RunKind = "restart"
	RunEnded    RunKind = "end"
)

// Warning: something the person should know; Hint may name a next step.
type Warning struct{ Message, Hint string }

// observer turns the engine's progress into events, each result once: a
// turn resumed after a question goes over results seen.
type observer struct {
	r    Reporter
	seen map[int]bool
}

func newObserver(r Reporter) *observer { return &observer{r: r, seen: map[int]bool{}} }

func (o *observer) Started(i int, c command.Command) {
	o.r.CommandStarted(CommandStarted{Index: i, Command: c})
}

func (o *observer) Finished(i int, c command.Command, res command.Result) {
	if o.seen[i] {
		return
	}
	o.seen[i] = true
	o.r.CommandFinished(CommandFinished{Index: i, Command: c, Result: res})
}

// discard is the reporter of a runner given none.
type discard struct{}

func (discard) SessionStarted(SessionStarted)   {}
func (discard) RequestWritten(RequestWritten)   {}
func (discard) WaitingForReply(WaitingForReply) {}
func (discard) ReplyTaken(ReplyTaken)           {}
func (discard) ReplySkipped(ReplySkipped)       {}
func (discard) ReplySetAside(ReplySetAside)     {}
func (discard) ReplyRefused(ReplyRefused)       {}
func (discard) TurnResumed(TurnResumed)         {}
func (discard) CommandStarted(CommandStarted)   {}
func (discard) CommandFinished(CommandFinished) {}
func (discard) ApprovalNeeded(ApprovalNeeded)   {}
func (discard) ApprovalDecided(ApprovalDecided) {}
func (discard) TurnEnded(TurnEnded)             {}
func (discard) TurnUndone(TurnUndone)           {}
func (discard) AgentRun(AgentRun)               {}
func (discard) Warning(Warning)                 {}
