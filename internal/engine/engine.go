// Package engine carries out a reply's commands against a session's
// workspace: it checks paths and policy, changes files, runs commands, and
// writes every step to the turn's journal so that a crash at any instant can
// be finished without doing anything twice.
package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/shell"
	"github.com/courier-agent/courier/internal/workspace"
)

// Options set how commands run.
type Options struct {
	// CommandTimeout limits each RUN_COMMAND; 0 means no limit.
	CommandTimeout time.Duration
	// MaxOutput caps a command's output in characters.
	MaxOutput int
	// Env is the environment commands start from (they get only its
	// allow-listed variables, see shell.Environ).
	Env []string
	// KeepEnv names more variables of Env that commands get.
	KeepEnv []string
	// Sandbox, when set, runs commands under the OS sandbox; each command
	// adds the workspace, the session and the protection of .git to it.
	Sandbox *sandbox.Options
	// Policy decides which commands run; nil allows every command.
	Policy *policy.Policy
	// Observer hears about each command as it runs; may be nil.
	Observer Observer
}

// diffLimit caps the diff a file change's result carries, in bytes: enough
// to show an edit, not a rewritten file.
const diffLimit = 3000

// Observer is told about progress as it happens.
type Observer interface {
	// Started is called when a command is about to be carried out: after
	// the policy and the person allowed it, never before a question.
	Started(i int, c command.Command)
	// Finished is called with each command's result, including results
	// recovered from an interrupted run.
	Finished(i int, c command.Command, r command.Result)
}

// Engine applies replies to one session's workspace.
type Engine struct {
	ws    *workspace.Workspace
	store session.Store
	opts  Options
}

// New returns an engine for a workspace and session store. The options'
// values are used as given: the config package holds the defaults.
func New(ws *workspace.Workspace, store session.Store, opts Options) *Engine {
	return &Engine{ws: ws, store: store, opts: opts}
}

// Input is a reply ready to apply.
type Input struct {
	// Name says where the reply came from (recorded in the journal).
	Name string
	// Text is the decoded reply, kept with the turn.
	Text     string
	Hash     string
	Commands []command.Command
}

// Outcome is what a turn came to.
type Outcome struct {
	Commands []command.Command
	Results  []command.Result
	// Done is set when the reply held a DONE command.
	Done    bool
	Summary string
	// Waiting is set when a command awaits the person's approval: no
	// decision for it is journaled and no approved rule covers it. The turn
	// is not finished; it resumes once a decision is journaled.
	Waiting *session.Pending
	// ApprovedRules are the session's "approve all like it" rules together
	// with those given during this turn, for the session state.
	ApprovedRules []string
	// Resumed is set when the turn continued an interrupted one.
	Resumed bool
}

// commandTag names one command of one turn, for its environment.
func commandTag(st *session.State, seq, i int) string {
	return fmt.Sprintf("%s/%d/%d", st.SessionID, seq, i+1)
}

// ErrNoTurn is returned by Resume when the session has no unfinished turn.
var ErrNoTurn = errors.New("no unfinished turn")

// BusyTurnError is a reply offered while another reply's turn is still
// unfinished.
type BusyTurnError struct {
	Session  string
	Sequence int
	Reply    string
}

func (e *BusyTurnError) Error() string {
	return fmt.Sprintf("session %s is still applying %s to request %d", e.Session, e.Reply, e.Sequence)
}

// Apply starts the turn answering the session's current outbox with a new
// reply and carries it out. If the turn had already begun (with this very
// reply) it is resumed instead.
func (e *Engine) Apply(ctx context.Context, st *session.State, in Input) (Outcome, error) {
	t, err := e.store.OpenTurn(st.SessionID, st.SequenceNumber)
	if err != nil {
		return Outcome{}, err
	}
	defer t.Close()
	begin, begun := t.Begun()
	if begun && begin.ReplyHash != in.Hash {
		return Outcome{}, &BusyTurnError{Session: st.SessionID, Sequence: st.SequenceNumber, Reply: begin.ReplyFile}
	}
	if !begun {
		if err := t.SaveReply([]byte(in.Text)); err != nil {
			return Outcome{}, err
		}
		err := t.Append(session.Record{Kind: session.Begin, ReplyHash: in.Hash, ReplyFile: in.Name, Commands: in.Commands})
		if err != nil {
			return Outcome{}, err
		}
	}
	return e.run(ctx, st, t)
}

// Unfinished returns the begin record of the session's current turn if a
// reply was being applied when courier stopped.
func (e *Engine) Unfinished(st *session.State) (session.Record, bool, error) {
	return e.store.Unfinished(st)
}

// Resume finishes the session's current turn after a crash, a Ctrl-C or an
// approval.
func (e *Engine) Resume(ctx context.Context, st *session.State) (Outcome, error) {
	if _, ok, err := e.Unfinished(st); err != nil || !ok {
		if err == nil {
			err = ErrNoTurn
		}
		return Outcome{}, err
	}
	t, err := e.store.OpenTurn(st.SessionID, st.SequenceNumber)
	if err != nil {
		return Outcome{}, err
	}
	defer t.Close()
	out, err := e.run(ctx, st, t)
	out.Resumed = true
	return out, err
}

// journalState indexes what a turn's journal says about each command.
type journalState struct {
	results   map[int]command.Result
	changes   map[int]*session.Change
	started   map[int]bool
	decisions map[int]session.Record
}

func index(t *session.Turn) journalState {
	js := journalState{
		results:   map[int]command.Result{},
		changes:   map[int]*session.Change{},
		started:   map[int]bool{},
		decisions: map[int]session.Record{},
	}
	for _, r := range t.Records {
		switch r.Kind {
		case session.Result:
			if r.Result != nil {
				js.results[r.Index] = *r.Result
			}
		case session.Apply:
			js.changes[r.Index] = r.Change
		case session.Start:
			js.started[r.Index] = true
		case session.Decision:
			js.decisions[r.Index] = r
		}
	}
	return js
}

// turnRun is one run of a turn: the engine, the session it works for (read
// only), the turn's journal and what the journal says so far.
type turnRun struct {
	*Engine
	st *session.State
	t  *session.Turn
	js journalState
	// approved are the session's "approve all like it" rules and those
	// given during this turn.
	approved []string
}

// run carries out the turn's commands that have no result yet, in order.
func (e *Engine) run(ctx context.Context, st *session.State, t *session.Turn) (out Outcome, err error) {
	begin, _ := t.Begun()
	out.Commands = begin.Commands
	js := index(t)
	r := &turnRun{Engine: e, st: st, t: t, js: js, approved: slices.Clone(st.ApprovedRules)}
	r.reapproveAll(begin.Commands)
	defer func() { out.ApprovedRules = r.approved }()
	for i, c := range begin.Commands {
		res, known := js.results[i]
		if !known {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			var waiting *session.Pending
			var err error
			res, waiting, err = r.step(ctx, i, c)
			if err != nil {
				return out, err
			}
			if waiting != nil {
				out.Waiting = waiting
				return out, nil
			}
			if err := t.Append(session.Record{Kind: session.Result, Index: i, Result: &res}); err != nil {
				return out, err
			}
			js.results[i] = res
			if ctx.Err() != nil && res.Status == command.Interrupted {
				e.finished(i, c, res)
				return out, ctx.Err()
			}
		}
		e.finished(i, c, res)
		out.Results = append(out.Results, res)
		if c.Type == command.Done && res.Success() {
			out.Done = true
			out.Summary = c.Text
		}
	}
	return out, nil
}

// started tells the observer a command is about to be carried out; a
// RUN_COMMAND is announced only once the policy and the person let it run,
// so nothing shows it as running while a question is on the screen.
func (e *Engine) started(i int, c command.Command) {
	if e.opts.Observer != nil {
		e.opts.Observer.Started(i, c)
	}
}

func (e *Engine) finished(i int, c command.Command, r command.Result) {
	if e.opts.Observer != nil {
		e.opts.Observer.Finished(i, c, r)
	}
}

// step carries out one command that has no recorded result, first settling
// anything an interrupted run left half done.
func (r *turnRun) step(ctx context.Context, i int, c command.Command) (command.Result, *session.Pending, error) {
	if ch := r.js.changes[i]; ch != nil {
		res, err := r.recoverChange(r.t, ch)
		return res, nil, err
	}
	if r.js.started[i] {
		// Whatever the command left running when courier died is stopped
		// now, so it cannot go on changing the workspace unseen.
		left := shell.KillTagged(commandTag(r.st, r.t.Sequence, i))
		summary := fmt.Sprintf("Command '%s' was interrupted (courier stopped while it ran); it was not run again", human.FirstLine(c.Command, 0))
		if left == 1 {
			summary += ", and the process it left running was stopped"
		} else if left > 1 {
			summary += fmt.Sprintf(", and the %d processes it left running were stopped", left)
		}
		return command.Result{Type: c.Type, Status: command.Interrupted, Command: c.Command, Summary: summary}, nil, nil
	}
	if c.Type != command.RunCommand {
		r.started(i, c)
	}
	switch c.Type {
	case command.CreateFile, command.EditFile, command.DeleteFile:
		res, err := r.changeFile(i, c)
		return res, nil, err
	case command.ReadFile:
		return r.readFile(c), nil, nil
	case command.RunCommand:
		return r.runCommand(ctx, i, c)
	case command.Message:
		return command.Result{Type: c.Type, Status: command.OK, Summary: "Message shown to the person"}, nil, nil
	case command.Done:
		return r.done(i), nil, nil
	case command.ParseError:
		return command.Result{Type: c.Type, Path: c.Path, Status: command.Failed, Summary: c.Error}, nil, nil
	}
	return command.Result{Type: c.Type, Status: command.Failed,
		Summary: fmt.Sprintf("Unknown command %s", c.Type)}, nil, nil
}

// reapproveAll puts back the "approve all like it" answers given during
// this turn: until the turn is committed they live only in its journal, so
// a crash would otherwise make courier ask again.
func (r *turnRun) reapproveAll(cmds []command.Command) {
	if r.opts.Policy == nil {
		return
	}
	for i, c := range cmds {
		if d, ok := r.js.decisions[i]; ok && d.All && d.Approved {
			r.approveAll(r.opts.Policy.Check(c.Command))
		}
	}
}

// done settles a DONE: it is honoured only if every command before it in
// the reply succeeded, so a reply can end with its final check and DONE;
// otherwise the session goes on and the LLM is told which command failed.
func (r *turnRun) done(i int) command.Result {
	begin, _ := r.t.Begun()
	for j := 0; j < i; j++ {
		res, ok := r.js.results[j]
		if !ok || res.Success() || begin.Commands[j].Type == command.Message {
			continue
		}
		what := string(res.Type)
		if c := begin.Commands[j]; c.Type == command.RunCommand {
			what += " '" + human.FirstLine(c.Command, 60) + "'"
		} else if c.Path != "" {
			what += " '" + c.Path + "'"
		}
		return command.Result{Type: command.Done, Status: command.Failed,
			Summary: fmt.Sprintf("DONE held back: command %d of this reply (%s) failed; the session goes on. Fix it, check again, then send DONE", j+1, what)}
	}
	return command.Result{Type: command.Done, Status: command.OK, Summary: "Task marked complete"}
}
