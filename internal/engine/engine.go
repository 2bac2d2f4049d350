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
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/shell"
	"github.com/courier-agent/courier/internal/workspace"
)

// Options set how commands run.
type Options struct {
	// CommandTimeout limits each RUN_COMMAND; 0 means no limit.
	CommandTimeout time.Duration
	// MaxOutput caps a command's output in characters.
	MaxOutput int
	// Env is the environment commands start from (secrets are removed).
	Env []string
	// KeepEnv names variables kept although they look like secrets.
	KeepEnv []string
	// Sandbox, when set, runs commands under the OS sandbox.
	Sandbox *sandbox.Options
	// Policy decides which commands run; nil allows every command.
	Policy *policy.Policy
	// Words names the front end's commands in the advice results give
	// ("change it with a RUN_COMMAND instead"); required.
	Words command.Words
	// Observer hears about each command as it runs; may be nil.
	Observer Observer
	// DiffLimit caps each file change's diff in bytes (default 3000).
	DiffLimit int
	// DiffBudget caps the diffs of one turn's results together, in bytes
	// (default 256 KB): past it, a change's result gives its line counts
	// without the diff, so a reply of many edits cannot make the journal
	// (or the next request) grow without bound.
	DiffBudget int
	// KeepLimit caps the earlier contents of the files one turn's file
	// commands change, which the turn keeps for undo, in bytes (default
	// 256 MB); a change that would need more is refused with a result
	// saying so.
	KeepLimit int64
}

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
	ws   *workspace.Workspace
	h    *history.History
	opts Options
}

// New returns an engine for a workspace and the session's history. The
// settings among the options are used as given (the config package holds
// their defaults); the engine's own bounds default here.
func New(ws *workspace.Workspace, h *history.History, opts Options) *Engine {
	if opts.DiffLimit == 0 {
		opts.DiffLimit = 3000
	}
	if opts.DiffBudget == 0 {
		opts.DiffBudget = 256 << 10
	}
	if opts.KeepLimit == 0 {
		opts.KeepLimit = 256 << 20
	}
	return &Engine{ws: ws, h: h, opts: opts}
}

// Input is a reply ready to apply. Its commands are all the turn keeps of
// it: the raw text stays in the inbox (and then inbox/processed/).
type Input struct {
	// Name says where the reply came from (recorded in the journal).
	Name     string
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
	Waiting *history.Pending
	// ApprovedRules are the session's "approve all like it" rules together
	// with those given during this turn, for the session state.
	ApprovedRules []string
	// Resumed is set when the turn continued an interrupted one.
	Resumed bool
	// Warnings are for the person: a snapshot budget reached, a turn only
	// partly undoable.
	Warnings []string
}

// commandTag names one command of one turn, for its environment.
func commandTag(st *history.State, seq, i int) string {
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
func (e *Engine) Apply(ctx context.Context, st *history.State, in Input) (Outcome, error) {
	t, err := e.h.Turn(st.SequenceNumber)
	if err != nil {
		return Outcome{}, err
	}
	defer t.Close()
	begin, begun := t.Begun()
	if begun && begin.ReplyHash != in.Hash {
		return Outcome{}, &BusyTurnError{Session: st.SessionID, Sequence: st.SequenceNumber, Reply: begin.ReplyFile}
	}
	if !begun {
		// Synced before the first change, or at the end of the turn (rule 1
		// of the history package).
		err = t.Add(history.Record{Kind: history.RecordBegin, ReplyHash: in.Hash, ReplyFile: in.Name, Commands: in.Commands, UndoPrev: st.UndoTop})
		if err != nil {
			return Outcome{}, err
		}
	}
	return e.run(ctx, st, t)
}

// Unfinished returns the begin record of the session's current turn if a
// reply was being applied when courier stopped.
func (e *Engine) Unfinished(st *history.State) (history.Record, bool, error) {
	return e.h.Unfinished(st)
}

// Resume finishes the session's current turn after a crash, a Ctrl-C or an
// approval.
func (e *Engine) Resume(ctx context.Context, st *history.State) (Outcome, error) {
	if _, ok, err := e.Unfinished(st); err != nil || !ok {
		if err == nil {
			err = ErrNoTurn
		}
		return Outcome{}, err
	}
	t, err := e.h.Turn(st.SequenceNumber)
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
	changes   map[int]*history.Record
	started   map[int]bool
	decisions map[int]history.Record
	// byPath lists the changes of each file, in order.
	byPath map[string][]int
}

func index(t *history.Turn) journalState {
	js := journalState{
		results:   map[int]command.Result{},
		changes:   map[int]*history.Record{},
		started:   map[int]bool{},
		decisions: map[int]history.Record{},
		byPath:    map[string][]int{},
	}
	for _, r := range t.Records {
		switch r.Kind {
		case history.RecordResult:
			if r.Result != nil {
				js.results[r.Index] = *r.Result
			} else if ch := js.changes[r.Index]; r.AsPlanned && ch != nil {
				js.results[r.Index] = *ch.Result
			}
		case history.RecordApply:
			js.note(r.Index, &r)
		case history.RecordStart:
			js.started[r.Index] = true
		case history.RecordDecision:
			js.decisions[r.Index] = r
		}
	}
	return js
}

// note adds a journaled change.
func (js *journalState) note(i int, ch *history.Record) {
	if _, ok := js.changes[i]; !ok {
		js.byPath[ch.Path] = append(js.byPath[ch.Path], i)
	}
	js.changes[i] = ch
}

// seen reports whether the turn journaled a change of p before.
func (js *journalState) seen(p string) bool { return len(js.byPath[p]) > 0 }

// turnRun is one run of a turn: the engine, the session it works for (read
// only), the turn's journal, what the journal says so far, and the file
// changes journaled but not yet made.
type turnRun struct {
	*Engine
	st       *history.State
	t        *history.Turn
	cmds     []command.Command
	js       journalState
	b        batch
	trackers trackers
	out      Outcome
	// starting is the command being carried out afresh, -1 for none.
	starting int
	// diffs is the size of the diffs of the turn's changes, -1 until
	// counted.
	diffs int
	// inlined is the size of the files the turn's inline reads returned,
	// -1 until counted.
	inlined int
	// approved are the session's "approve all like it" rules and those
	// given during this turn.
	approved []string
	// kept is the size of the earlier contents of the files this run's
	// file commands change first, which the turn keeps (see KeepLimit).
	kept int64
}

// command returns the turn's command i.
func (r *turnRun) command(i int) command.Command { return r.cmds[i] }

// run carries out the turn's commands that have no result yet, in order,
// and leaves everything it did durable.
func (e *Engine) run(ctx context.Context, st *history.State, t *history.Turn) (Outcome, error) {
	begin, _ := t.Begun()
	r := &turnRun{Engine: e, st: st, t: t, cmds: begin.Commands, js: index(t), b: newBatch(), starting: -1, diffs: -1, inlined: -1,
		approved: slices.Clone(st.ApprovedRules)}
	r.out.Commands = begin.Commands
	r.reapproveAll(begin.Commands)
	err := r.commands(ctx)
	if ferr := r.flush(); err == nil {
		err = ferr
	}
	if serr := t.Sync(); err == nil {
		err = serr
	}
	r.out.ApprovedRules = r.approved
	if err == nil && r.out.Waiting == nil {
		warnings, ferr := t.Finish()
		if ferr != nil {
			return r.out, fmt.Errorf("snapshot: %w", ferr)
		}
		r.out.Warnings = append(r.out.Warnings, warnings...)
	}
	return r.out, err
}

// commands steps through the commands; the results settle in the batch.
func (r *turnRun) commands(ctx context.Context) error {
	for i, c := range r.cmds {
		if _, known := r.js.results[i]; known {
			r.queue(i, false)
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		waiting, err := r.step(ctx, i, c)
		if err != nil {
			return err
		}
		if waiting != nil {
			r.out.Waiting = waiting
			return nil
		}
		if res := r.js.results[i]; ctx.Err() != nil && res.Status == command.Interrupted {
			return ctx.Err()
		}
	}
	return nil
}

// report tells the observer and the outcome about a settled command.
func (r *turnRun) report(i int, res command.Result) {
	c := r.cmds[i]
	if c.Note != "" {
		// What the reader left out of the block, so the LLM knows what ran.
		res.Summary += "; " + c.Note
	}
	r.finished(i, c, res)
	r.out.Results = append(r.out.Results, res)
	if c.Type == command.Done && res.Success() {
		r.out.Done = true
		r.out.Summary = c.Text
	}
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
// anything an interrupted run left half done. A file command only joins
// the batch; anything that looks at the workspace makes the batch first.
func (r *turnRun) step(ctx context.Context, i int, c command.Command) (*history.Pending, error) {
	if ch := r.js.changes[i]; ch != nil {
		return nil, r.recoverChange(i, c, ch)
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
		res := command.Result{Type: c.Type, Status: command.Interrupted, Command: c.Command, Summary: summary}
		// What it changed before it stopped is its own, not the starting
		// point of the next command.
		if err := r.changed(i, nil, &res); err != nil {
			return nil, err
		}
		return nil, r.settle(i, res)
	}
	r.starting = i
	defer func() { r.starting = -1 }()
	switch c.Type {
	case command.CreateFile, command.EditFile, command.DeleteFile:
		return nil, r.changeFile(i, c)
	case command.ReadFile:
		if err := r.flush(); err != nil {
			return nil, err
		}
		res := r.readFile(c, r.inlineRoom())
		r.inlined += int(res.Size)
		return nil, r.settle(i, res)
	case command.RunCommand:
		if err := r.flush(); err != nil {
			return nil, err
		}
		r.starting = -1
		res, waiting, err := r.runCommand(ctx, i, c)
		if err != nil || waiting != nil {
			return waiting, err
		}
		if err := r.settle(i, res); err != nil {
			return nil, err
		}
		return nil, r.flush()
	case command.Message:
		return nil, r.settle(i, command.Result{Type: c.Type, Status: command.OK, Summary: "Message shown to the person"})
	case command.Done:
		// The results before it are settled first: DONE depends on them.
		if err := r.flush(); err != nil {
			return nil, err
		}
		return nil, r.settle(i, r.done(i))
	case command.ParseError:
		return nil, r.settle(i, command.Result{Type: c.Type, Path: c.Path, Status: command.Failed, Summary: c.Error})
	}
	return nil, r.settle(i, command.Result{Type: c.Type, Status: command.Failed,
		Summary: fmt.Sprintf("Unknown command %s", c.Type)})
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
			r.approveAll(r.opts.Policy.Check(c.Command).WithEnv(c.Env))
		}
	}
}

// done settles a DONE: it is honoured only if every command before it in
// the reply succeeded, so a reply can end with its final check and DONE;
// otherwise the session goes on and the LLM is told which command failed.
func (r *turnRun) done(i int) command.Result {
	for j := 0; j < i; j++ {
		res, ok := r.js.results[j]
		if !ok || res.Success() || r.cmds[j].Type == command.Message {
			continue
		}
		what := string(res.Type)
		if c := r.cmds[j]; c.Type == command.RunCommand {
			what += " '" + human.FirstLine(c.Command, 60) + "'"
		} else if c.Path != "" {
			what += " '" + c.Path + "'"
		}
		return command.Result{Type: command.Done, Status: command.Failed,
			Summary: fmt.Sprintf("DONE held back: command %d of this reply (%s) failed; the session goes on. Fix it, check again, then send DONE", j+1, what)}
	}
	return command.Result{Type: command.Done, Status: command.OK, Summary: "Task marked complete"}
}

// changed records what command i changed (in paths, or anywhere for nil)
// since the snapshot taken before it, and tells the LLM in its result.
func (r *turnRun) changed(i int, paths []string, res *command.Result) error {
	ch, err := r.t.After(i, paths)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if len(ch.List) == 0 {
		return nil
	}
	if res != nil && res.Type == command.RunCommand {
		res.Changed = ch.Summary(changedItems)
	}
	return nil
}

// changedItems caps the paths a command's result names as changed.
const changedItems = 10
