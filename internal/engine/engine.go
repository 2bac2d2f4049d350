// Package engine carries out a reply's commands against a session's
// workspace: it checks paths and policy, changes files, runs commands, and
// writes every step to the turn's journal so that a crash at any instant can
// be finished without doing anything twice.
package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/shell"
	"github.com/courier-agent/courier/internal/workspace"
)

// Options set how commands run.
type Options struct {
	// CommandTimeout limits each RUN_COMMAND (default 30s).
	CommandTimeout time.Duration
	// MaxOutput caps a command's output in characters (default 4000).
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
	// Approver answers commands that need the person's approval; nil makes
	// the turn wait for 'courier approve' or 'courier deny'.
	Approver Approver
	// Observer hears about each command, for the console; may be nil.
	Observer Observer
	// DiffLimit caps each file change's diff in bytes (default 3000).
	DiffLimit int
}

// Observer is told about progress as it happens.
type Observer interface {
	// Started is called before a command is carried out.
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

// New returns an engine for a workspace and session store.
func New(ws *workspace.Workspace, store session.Store, opts Options) *Engine {
	if opts.CommandTimeout == 0 {
		opts.CommandTimeout = 30 * time.Second
	}
	if opts.MaxOutput == 0 {
		opts.MaxOutput = 4000
	}
	if opts.DiffLimit == 0 {
		opts.DiffLimit = 3000
	}
	return &Engine{ws: ws, store: store, opts: opts}
}

// Input is a reply ready to apply.
type Input struct {
	Raw      []byte
	Hash     string
	File     string
	Commands []command.Command
}

// Outcome is what a turn came to.
type Outcome struct {
	Commands []command.Command
	Results  []command.Result
	// Done is set when the reply held a DONE command.
	Done    bool
	Summary string
	// Waiting is set when a command awaits the person's approval; the turn
	// is not finished and resumes once it is answered.
	Waiting *session.Pending
	// Resumed is set when the turn continued an interrupted one.
	Resumed bool
}

// commandTag names one command of one turn, for its environment.
func commandTag(st *session.State, seq, i int) string {
	return fmt.Sprintf("%s/%d/%d", st.SessionID, seq, i+1)
}

// ErrNoTurn is returned by Resume when the session has no unfinished turn.
var ErrNoTurn = errors.New("no unfinished turn")

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
		return Outcome{}, fmt.Errorf("turn %d of session %s is already applying another reply (%s); finish it with 'courier process' first",
			st.SequenceNumber, st.SessionID, begin.ReplyFile)
	}
	if !begun {
		if err := t.SaveReply(in.Raw); err != nil {
			return Outcome{}, err
		}
		err := t.Append(session.Record{Kind: session.Begin, ReplyHash: in.Hash, ReplyFile: in.File, Commands: in.Commands})
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

// turnRun is one run of a turn: the engine, the session it changes, the
// turn's journal and what the journal says so far.
type turnRun struct {
	*Engine
	st *session.State
	t  *session.Turn
	js journalState
}

// run carries out the turn's commands that have no result yet, in order.
func (e *Engine) run(ctx context.Context, st *session.State, t *session.Turn) (Outcome, error) {
	begin, _ := t.Begun()
	out := Outcome{Commands: begin.Commands}
	js := index(t)
	r := &turnRun{Engine: e, st: st, t: t, js: js}
	st.Pending = nil
	r.reapproveAll(begin.Commands)
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
				st.Pending = waiting
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
		if c.Type == command.Done {
			out.Done = true
			out.Summary = c.Text
		}
	}
	return out, nil
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
		summary := fmt.Sprintf("Command '%s' was interrupted (courier stopped while it ran); it was not run again", firstLine(c.Command))
		if left == 1 {
			summary += ", and the process it left running was stopped"
		} else if left > 1 {
			summary += fmt.Sprintf(", and the %d processes it left running were stopped", left)
		}
		return command.Result{Type: c.Type, Status: command.Interrupted, Command: c.Command, Summary: summary}, nil, nil
	}
	if r.opts.Observer != nil {
		r.opts.Observer.Started(i, c)
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
		return command.Result{Type: c.Type, Status: command.OK, Summary: "Task marked complete"}, nil, nil
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
			approveAll(r.st, r.opts.Policy.Check(c.Command))
		}
	}
}
