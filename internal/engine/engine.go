// Package engine carries out a reply's commands against a session's
// workspace: it checks paths and policy, changes files, runs commands, and
// writes every step to the turn's record so that a crash at any instant
// can be finished without doing anything twice.
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

// Options set how commands run: the settings, what the runner adds for
// each turn (Words, required, and Observer), and bounds tests lower.
type Options struct {
	// Timeout limits each RUN_COMMAND (0: none); MaxOutput caps its
	// output in characters.
	Timeout   time.Duration
	MaxOutput int
	// Env is the environment commands start from (secrets removed),
	// KeepEnv names variables kept although they look like secrets.
	Env, KeepEnv []string
	Sandbox      *sandbox.Options // nil: no OS sandbox
	Policy       *policy.Policy   // nil: every command runs
	Words        command.Words
	Observer     Observer
	// DiffBudget caps a turn's diffs (256 KB; past it, line counts only),
	// KeepLimit the earlier contents a turn keeps for undo (256 MB).
	DiffBudget int
	KeepLimit  int64
}

// diffLimit caps each change's diff, in bytes.
const diffLimit = 3000

// Observer is told about progress as it happens: a command about to be
// carried out (after any question), and each result, recovered ones too.
type Observer interface {
	Started(i int, c command.Command)
	Finished(i int, c command.Command, r command.Result)
}

// Engine applies replies to one session's workspace.
type Engine struct {
	ws   *workspace.Workspace
	h    *history.History
	opts Options
}

// New returns an engine for a workspace and the session's history.
func New(ws *workspace.Workspace, h *history.History, opts Options) *Engine {
	if opts.DiffBudget == 0 {
		opts.DiffBudget = 256 << 10
	}
	if opts.KeepLimit == 0 {
		opts.KeepLimit = 256 << 20
	}
	return &Engine{ws: ws, h: h, opts: opts}
}

// Input is a reply ready to apply: its commands are all the turn keeps.
type Input struct {
	Name     string // where the reply came from
	Hash     string
	Commands []command.Command
}

// Outcome is what a turn came to.
type Outcome struct {
	Commands []command.Command
	Results  []command.Result
	Done     bool // a DONE was honoured
	Summary  string
	// Waiting is set when a command awaits the person's approval: the turn
	// resumes once a decision is recorded.
	Waiting *history.Pending
	// ApprovedRules are the session's "approve all like it" rules and
	// those given during this turn.
	ApprovedRules []string
	Warnings      []string // for the person
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

// Apply starts the turn answering the session's current request with a
// reply and carries it out, or resumes it if this reply began it.
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
		// Synced before the first change (rule 1 of the history package).
		if err := t.Add(history.Record{Kind: history.RecordBegin, ReplyHash: in.Hash, ReplyFile: in.Name, Commands: in.Commands, UndoPrev: st.UndoTop}); err != nil {
			return Outcome{}, err
		}
	}
	return e.run(ctx, st, t)
}

// Resume finishes the session's current turn after a crash, a Ctrl-C or an
// approval.
func (e *Engine) Resume(ctx context.Context, st *history.State) (Outcome, error) {
	if _, ok, err := e.h.Unfinished(st); err != nil || !ok {
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
	return e.run(ctx, st, t)
}

// turnRun is one run of a turn: the session (read only), the turn's
// record and what it says so far about each command, and the changes not
// yet made.
type turnRun struct {
	*Engine
	st        *history.State
	t         *history.Turn
	cmds      []command.Command
	results   map[int]command.Result
	changes   map[int]*history.Record
	started   map[int]bool
	decisions map[int]history.Record
	byPath    map[string][]int // the changes of each file, in order

	b              batch
	trackers       map[string]tracker
	out            Outcome
	starting       int // the command carried out afresh, -1 for none
	diffs, inlined int // the bytes of the turn's diffs and inline reads
	approved       []string
	kept           int64 // the earlier content this run keeps
}

// run carries out the turn's commands that have no result yet, in order,
// and leaves everything it did durable.
func (e *Engine) run(ctx context.Context, st *history.State, t *history.Turn) (Outcome, error) {
	begin, _ := t.Begun()
	cmds, err := begin.AllCommands()
	if err != nil {
		return Outcome{}, err
	}
	r := &turnRun{Engine: e, st: st, t: t, cmds: cmds, results: map[int]command.Result{}, changes: map[int]*history.Record{},
		started: map[int]bool{}, decisions: map[int]history.Record{}, byPath: map[string][]int{},
		b: newBatch(), trackers: map[string]tracker{}, starting: -1, approved: slices.Clone(st.ApprovedRules),
		out: Outcome{Commands: cmds}}
	r.index()
	err = r.commands(ctx)
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

func (r *turnRun) commands(ctx context.Context) error {
	for i, c := range r.cmds {
		if _, known := r.results[i]; known {
			r.queue(i, false)
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		waiting, err := r.step(ctx, i, c)
		if err != nil || waiting != nil {
			r.out.Waiting = waiting
			return err
		}
		if res := r.results[i]; ctx.Err() != nil && res.Status == command.Interrupted {
			return ctx.Err()
		}
	}
	return nil
}

// index reads what the turn's record says so far about each command.
func (r *turnRun) index() {
	for _, rec := range r.t.Records {
		switch rec.Kind {
		case history.RecordResult:
			if rec.Result != nil {
				r.results[rec.Index] = *rec.Result
			} else if ch := r.changes[rec.Index]; rec.AsPlanned && ch != nil {
				r.results[rec.Index] = *ch.Result
			}
			if res := r.results[rec.Index]; res.Type == command.ReadFile {
				r.inlined += int(res.Size)
			}
		case history.RecordApply:
			r.note(rec.Index, &rec)
			r.diffs += len(rec.Result.Diff)
		case history.RecordStart:
			r.started[rec.Index] = true
		case history.RecordDecision:
			r.decisions[rec.Index] = rec
			// This turn's "approve all like it" answers, which only its
			// record holds until the commit.
			if c := r.cmds[rec.Index]; rec.All && rec.Approved && r.opts.Policy != nil {
				r.approveAll(r.opts.Policy.Check(c.Command).WithEnv(c.Env))
			}
		}
	}
}

// note adds a recorded change.
func (r *turnRun) note(i int, ch *history.Record) {
	if _, ok := r.changes[i]; !ok {
		r.byPath[ch.Path] = append(r.byPath[ch.Path], i)
	}
	r.changes[i] = ch
}

// seen reports whether the turn recorded a change of p before.
func (r *turnRun) seen(p string) bool { return len(r.byPath[p]) > 0 }

// report tells the observer and the outcome about a settled command.
func (r *turnRun) report(i int, res command.Result) {
	c := r.cmds[i]
	if c.Note != "" {
		// What the reader left out of the block, so the LLM knows what ran.
		res.Summary += "; " + c.Note
	}
	r.opts.Observer.Finished(i, c, res)
	r.out.Results = append(r.out.Results, res)
	if c.Type == command.Done && res.Success() {
		r.out.Done = true
		r.out.Summary = c.Text
	}
}

// step carries out a command with no recorded result, settling first
// what an interrupted run left. A file command joins the batch; any other
// may look at the workspace, so the batch is made first.
func (r *turnRun) step(ctx context.Context, i int, c command.Command) (*history.Pending, error) {
	if ch := r.changes[i]; ch != nil {
		return nil, r.recoverChange(i, c, ch)
	}
	if r.started[i] {
		// What it left running when courier died is stopped now.
		left := shell.KillTagged(commandTag(r.st, r.t.Sequence, i))
		summary := fmt.Sprintf("Command '%s' was interrupted (courier stopped while it ran); it was not run again", human.FirstLine(c.Command, 0))
		if left == 1 {
			summary += ", and the process it left running was stopped"
		} else if left > 1 {
			summary += fmt.Sprintf(", and the %d processes it left running were stopped", left)
		}
		res := result(c, command.Interrupted, "%s", summary)
		// What it changed before it stopped is its own.
		if err := r.changed(i, nil, &res); err != nil {
			return nil, err
		}
		return nil, r.settle(i, res)
	}
	r.starting = i
	defer func() { r.starting = -1 }()
	if c.ChangesFiles() {
		return nil, r.changeFile(i, c)
	}
	if err := r.flush(); err != nil {
		return nil, err
	}
	switch c.Type {
	case command.ReadFile:
		res := r.readFile(c, InlineReadLimit-r.inlined)
		r.inlined += int(res.Size)
		return nil, r.settle(i, res)
	case command.RunCommand:
		r.starting = -1
		res, waiting, err := r.runCommand(ctx, i, c)
		if err != nil || waiting != nil {
			return waiting, err
		}
		r.settle(i, res)
		return nil, r.flush()
	case command.Message:
		return nil, r.settle(i, result(c, command.OK, "Message shown to the person"))
	case command.Done:
		return nil, r.settle(i, r.done(i))
	case command.ParseError:
		return nil, r.settle(i, failed(c, "%s", c.Error))
	}
	return nil, r.settle(i, failed(c, "Unknown command %s", c.Type))
}

// done settles a DONE, honoured only if every command before it succeeded
// (a reply may end with its final check and DONE).
func (r *turnRun) done(i int) command.Result {
	for j := 0; j < i; j++ {
		res, ok := r.results[j]
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
// and tells the LLM in a RUN_COMMAND's result.
func (r *turnRun) changed(i int, paths []string, res *command.Result) error {
	ch, err := r.t.After(i, paths)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if len(ch.List) > 0 && res != nil && res.Type == command.RunCommand {
		res.Changed = ch.Summary(changedItems)
	}
	return nil
}

// changedItems caps the paths a command's result names as changed.
const changedItems = 10
