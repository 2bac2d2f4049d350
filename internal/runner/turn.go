package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/termtext"
	"github.com/courier-agent/courier/internal/workspace"
)

// apply applies a reply to the held session.
func (s *Session) apply(ctx context.Context, rep reply.Reply) error {
	if _, _, err := s.finishUndo(); err != nil {
		return err
	}
	st := s.st
	if st.IsComplete {
		return &CompleteError{Session: st.SessionID}
	}
	if st.Run {
		return &RefusedError{Reply: rep.Name, Reason: fmt.Sprintf("%s is a run of 'courier ops', which takes no replies; nothing was run", st.SessionID)}
	}
	begin, unfinished, err := s.r.store.Unfinished(st)
	if err != nil {
		return err
	}
	if unfinished && begin.ReplyHash != rep.Hash {
		return &UnfinishedError{Session: st.SessionID, Reply: begin.ReplyFile, Approval: st.Pending != nil}
	}
	if !unfinished {
		if rep.Empty() {
			return &EmptyReplyError{Reply: rep.Name}
		}
		if err := s.check(rep); err != nil {
			return err
		}
		// A reply naming no session may be one another session is still
		// applying: it belongs there.
		if rep.Route(s.r.cfg.FrontEnds...) == "" {
			if other := s.r.first(func(o *history.State) bool {
				begin, ok, err := s.r.store.Unfinished(o)
				return o.SessionID != st.SessionID && !o.IsComplete && err == nil && ok && begin.ReplyHash == rep.Hash
			}); other != nil {
				return &SkippedError{Reply: rep.Name, Session: other.SessionID}
			}
		}
	}
	s.r.cfg.Reporter.ReplyTaken(ReplyTaken{Session: st.SessionID, Sequence: st.SequenceNumber, Name: rep.Name})
	s.lock.Note(fmt.Sprintf("applying reply %s to request %d", rep.Name, st.SequenceNumber))
	_, err = s.turn(ctx, func(eng *engine.Engine) (engine.Outcome, error) {
		return eng.Apply(ctx, st, engine.Input{Name: rep.Name, Hash: rep.Hash, Commands: rep.Parsed.Commands})
	})
	return err
}

// check refuses a reply applied before or answering another request.
func (s *Session) check(rep reply.Reply) error {
	st := s.st
	prev, at, err := s.r.store.FindReply(st, rep.Hash)
	if err != nil {
		return err
	}
	if prev > 0 {
		return &RefusedError{Reply: rep.Name, Duplicate: true, Reason: fmt.Sprintf(
			"reply %s was already applied as the answer to request %d of session %s (on %s); it was not run again",
			rep.Name, prev, st.SessionID, at.Local().Format("2006-01-02 15:04"))}
	}
	seq := rep.Parsed.Sequence
	if seq != 0 && seq < st.SequenceNumber && s.r.undoneSince(st, seq) {
		// Every turn since was undone: the reply (say, the complete one of
		// a cut-off one undone) still fits the workspace.
		return nil
	}
	if seq != 0 && seq != st.SequenceNumber {
		when := "an outdated request"
		if seq > st.SequenceNumber {
			when = "a request that does not exist yet"
		}
		return &RefusedError{Reply: rep.Name, Reason: fmt.Sprintf(
			"reply %s answers request %d of session %s, %s: the current request is %d (%s); nothing was run",
			rep.Name, seq, st.SessionID, when, st.SequenceNumber, s.r.requestPath(st.SessionID, st.SequenceNumber))}
	}
	return nil
}

// Recover finishes a turn an earlier run left unfinished, with a decision
// another process left, and reports whether there was one; settle, if
// set, hears of its reply.
func (s *Session) Recover(ctx context.Context, settle func(name, hash string)) (bool, error) {
	if err := s.r.cleanTemps(s.st.SessionID); err != nil {
		return false, err
	}
	if _, _, err := s.finishUndo(); err != nil {
		return false, err
	}
	begin, ok, err := s.r.store.Unfinished(s.st)
	if err != nil || !ok {
		return false, err
	}
	n, found, err := s.r.readDecision(s.st)
	if found {
		err = s.journalDecision(n, true)
	}
	if err != nil {
		return true, err
	}
	s.r.cfg.Reporter.TurnResumed(TurnResumed{Session: s.st.SessionID, Sequence: s.st.SequenceNumber, Reply: begin.ReplyFile, AfterApproval: s.st.Pending != nil, Agent: s.replyAgent(begin.ReplyFile)})
	s.lock.Note(fmt.Sprintf("finishing reply %s to request %d", begin.ReplyFile, s.st.SequenceNumber))
	_, err = s.turn(ctx, func(eng *engine.Engine) (engine.Outcome, error) {
		return eng.Resume(ctx, s.st)
	})
	if err == nil && settle != nil {
		settle(begin.ReplyFile, begin.ReplyHash)
	}
	return true, err
}

// turn runs the engine (start applies or resumes), resuming after each
// question the approver answers, and commits the turn.
func (s *Session) turn(ctx context.Context, start func(*engine.Engine) (engine.Outcome, error)) (out engine.Outcome, err error) {
	opts := s.r.cfg.Commands
	if s.st.Preset != "" {
		if opts.Policy, err = s.r.preset(s.st.Preset); err != nil {
			return out, err
		}
	}
	opts.Words = s.fe.Words()
	opts.Observer = newObserver(s.r.cfg.Reporter)
	err = s.r.onHistory(s.st, func(ws *workspace.Workspace, h *history.History) error {
		eng := engine.New(ws, h, opts)
		out, err = start(eng)
		for err == nil && out.Waiting != nil {
			if err = s.wait(ctx, out); err == nil {
				out, err = eng.Resume(ctx, s.st)
			}
		}
		return err
	})
	if err != nil {
		return out, err
	}
	for _, w := range out.Warnings {
		s.r.cfg.Reporter.Warning(Warning{Message: w})
	}
	return out, s.commit(out)
}

// wait records the approver's answer to the question a turn stopped at,
// or one 'courier approve' left meanwhile.
func (s *Session) wait(ctx context.Context, out engine.Outcome) error {
	p := out.Waiting
	st := s.st
	st.Pending = out.Waiting
	st.ApprovedRules = out.ApprovedRules
	st.UpdatedAt = time.Now().UTC()
	if err := s.r.store.Save(st); err != nil {
		return err
	}
	q := Question{Session: st.SessionID, Sequence: p.Sequence, Index: p.Index, Command: p.Command, Env: p.Env, Reason: p.Reason, Covers: p.Covers}
	s.r.cfg.Reporter.ApprovalNeeded(q)
	s.lock.Note("waiting for approval of " + termtext.Command(p.Command, p.Env))
	if s.r.cfg.Approver == nil {
		return &WaitingError{Session: st.SessionID, Pending: *out.Waiting}
	}
	var n decisionNote
	d, polled, err := whileNot(ctx, func(actx context.Context) (Decision, error) {
		d, err := s.r.cfg.Approver.Approve(actx, q)
		if err == nil && d.Answer == Later {
			// Keep waiting for an answer from another terminal.
			<-actx.Done()
			return d, actx.Err()
		}
		return d, err
	}, func() (found bool, err error) {
		n, found, err = s.r.readDecision(st)
		return found, err
	})
	switch {
	case polled:
		return s.journalDecision(n, true)
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return err
	case d.Decides():
		return s.journalDecision(decided(p, d), false)
	}
	return &WaitingError{Session: st.SessionID, Pending: *out.Waiting}
}

// whileNot returns what call returns, unless poll, asked every
// decisionPoll, says stop first (polled): call is then cancelled.
func whileNot[T any](ctx context.Context, call func(context.Context) (T, error), poll func() (bool, error)) (v T, polled bool, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cv T
	var cerr error
	done := make(chan struct{})
	go func() { cv, cerr = call(cctx); close(done) }()
	tick := time.NewTicker(decisionPoll)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return cv, polled, cerr
		case <-tick.C:
			if polled {
				continue
			}
			stop, err := poll()
			if err != nil {
				return v, false, err
			}
			if stop {
				polled = true
				cancel()
			}
		}
	}
}

// journalDecision records the person's answer in the turn.
func (s *Session) journalDecision(n decisionNote, elsewhere bool) error {
	t, err := s.r.store.OpenTurn(s.st.SessionID, n.Sequence)
	if err != nil {
		return err
	}
	defer t.Close()
	rec := history.Record{Kind: history.RecordDecision, Index: n.Index, Approved: n.Approved, All: n.All && n.Approved, Reason: n.Reason}
	if err := t.Append(rec); err != nil {
		return err
	}
	if elsewhere {
		if err := s.r.dropDecision(s.st.SessionID); err != nil {
			return err
		}
	}
	cmd := ""
	if s.st.Pending != nil {
		cmd = s.st.Pending.Command
	}
	s.r.cfg.Reporter.ApprovalDecided(ApprovalDecided{Session: s.st.SessionID, Command: cmd, Approved: rec.Approved, All: rec.All, Reason: rec.Reason, Elsewhere: elsewhere})
	return nil
}

// commit finishes a turn the engine left durable: the next request, then
// the state (the commit point); a crash before repeats all of it.
func (s *Session) commit(out engine.Outcome) error {
	st := s.st
	seq := st.SequenceNumber
	next := *st
	// Undo takes back the most recent turn, even one that changed nothing
	// (a cut-off reply), so the complete reply answers its request.
	next.Pending, next.UndoTop, next.ApprovedRules = nil, seq, out.ApprovedRules
	next.LastResults = append([]command.Result{}, out.Results...)
	next.ReadFileRequests = []history.ReadRequest{}
	for i, c := range out.Commands {
		// An inline read's content is in its result.
		if c.Type == command.ReadFile && !c.Inline && i < len(out.Results) && out.Results[i].Success() {
			next.ReadFileRequests = append(next.ReadFileRequests, history.ReadRequest{Path: c.Path, StartLine: c.StartLine, EndLine: c.EndLine})
		}
	}
	// The words said meanwhile go into the next request, or wait for a
	// follow-up task.
	said, err := s.r.waitingWords(st.SessionID)
	if err != nil {
		return err
	}
	next.Notices, next.Messages, next.NewChat, next.Prompt = nil, nil, false, ""
	if len(out.Commands) == 0 {
		next.Notices = []string{s.fe.NoCommands()}
	}
	var written RequestWritten
	if out.Done || st.Run {
		// A run has one turn: no request follows it.
		next.IsComplete, next.Summary = true, out.Summary
		if err := s.save(&next); err != nil {
			return err
		}
		// What the session's commands wrote into the tool caches ends with
		// it; a follow-up task starts a new layer.
		if sb := s.r.cfg.Commands.Sandbox; sb != nil && sb.Caches != "" {
			_ = sandbox.RemoveLayer(sb.Caches, st.SessionID)
		}
	} else {
		next.SequenceNumber++
		if written, err = s.advance(&next, said); err != nil {
			return err
		}
	}
	s.r.cfg.Reporter.TurnEnded(TurnEnded{Session: st.SessionID, Sequence: seq, Commands: out.Commands,
		Results: out.Results, Complete: out.Done, Summary: out.Summary})
	if written.Path != "" {
		s.r.cfg.Reporter.RequestWritten(written)
	}
	return nil
}

// Decide records the person's decision on the command a session (or the
// one waiting) waits for, and carries on with the turn; a courier process
// holding the session is left the decision (handedOver).
func (r *Runner) Decide(ctx context.Context, id string, d Decision, src Source) (handedOver bool, err error) {
	if id == "" {
		w := r.first(func(st *history.State) bool { return st.Pending != nil })
		if w == nil {
			return false, ErrNoSession
		}
		id = w.SessionID
	}
	st, err := r.store.Load(id)
	if err != nil {
		return false, err
	}
	if !d.Decides() {
		return false, fmt.Errorf("a decision must approve or deny, not %v", d.Answer)
	}
	if st.Pending == nil {
		return false, &NotWaitingError{Session: id}
	}
	n := decided(st.Pending, d)
	s, err := r.Hold(id, "courier "+map[bool]string{true: "approve", false: "deny"}[n.Approved])
	if errors.As(err, new(*history.LockedError)) {
		err := r.leaveDecision(id, n)
		return err == nil, err
	}
	if err != nil {
		return false, err
	}
	defer s.Release()
	if s.st.Pending == nil {
		return false, &NotWaitingError{Session: id}
	}
	// A decision left for a holder that went away is older.
	if err := r.dropDecision(id); err != nil {
		return false, err
	}
	n = decided(s.st.Pending, d)
	if err := s.journalDecision(n, false); err != nil {
		return false, err
	}
	_, err = s.Recover(ctx, func(name, hash string) { s.settle(src, name, hash, Applied) })
	return false, interrupted(ctx, id, err)
}

// undoneSince reports whether the workspace is again as request seq
// showed it: the turn answering it and every later one were undone.
func (r *Runner) undoneSince(st *history.State, seq int) bool {
	for k := seq; k < st.SequenceNumber; k++ {
		t, err := r.store.ReadTurn(st.SessionID, k)
		if errors.Is(err, fs.ErrNotExist) && k > seq {
			continue
		}
		if err != nil || !t.Has(history.RecordUndone) {
			return false
		}
	}
	return true
}

// Approver puts a command the policy will not run alone to the person.
type Approver interface {
	Approve(ctx context.Context, q Question) (Decision, error)
}

// Question is what the person is asked about: a command, its variables,
// why the policy asks and what "all like it" would cover.
type Question struct {
	Session                      string
	Sequence, Index              int
	Command, Env, Reason, Covers string
}

// Answer is the person's answer to a question.
type Answer int

// The answers.
const (
	// Stop leaves the question for 'courier approve' or 'courier deny'.
	Stop Answer = iota
	Approve
	ApproveAll // and every later command like it
	Deny
	// Later waits for an answer from another terminal.
	Later
)

// Decision is an answer with the reason given for a denial.
type Decision struct {
	Answer Answer
	Reason string
}

// Decides reports whether d approves or denies.
func (d Decision) Decides() bool {
	return d.Answer == Approve || d.Answer == ApproveAll || d.Answer == Deny
}

// decided is the note answering question q with d, which decides it.
func decided(q *history.Pending, d Decision) decisionNote {
	approved := d.Answer == Approve || d.Answer == ApproveAll
	return decisionNote{Sequence: q.Sequence, Index: q.Index, Approved: approved, All: d.Answer == ApproveAll, Reason: d.Reason}
}

// Yes approves everything (the yes setting).
type Yes struct{}

// Approve implements Approver.
func (Yes) Approve(context.Context, Question) (Decision, error) {
	return Decision{Answer: Approve}, nil
}

// decisionNote is a decision left for the process holding the session.
type decisionNote struct {
	Sequence int    `json:"sequence"`
	Index    int    `json:"index"`
	Approved bool   `json:"approved"`
	All      bool   `json:"all"`
	Reason   string `json:"reason,omitempty"`
}

func (r *Runner) decisionPath(id string) string {
	return filepath.Join(r.cfg.Paths.Sessions, id+".decision")
}

// readDecision returns the note left for the pending question.
func (r *Runner) readDecision(st *history.State) (decisionNote, bool, error) {
	p := r.decisionPath(st.SessionID)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return decisionNote{}, false, nil
	}
	if err != nil {
		return decisionNote{}, false, fmt.Errorf("read decision: %w", err)
	}
	var n decisionNote
	if json.Unmarshal(data, &n) != nil || st.Pending == nil || n.Sequence != st.Pending.Sequence || n.Index != st.Pending.Index {
		os.Remove(p)
		return decisionNote{}, false, nil
	}
	return n, true, nil
}

func (r *Runner) dropDecision(id string) error {
	if err := os.Remove(r.decisionPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("decision: %w", err)
	}
	return nil
}

func (r *Runner) leaveDecision(id string, n decisionNote) error {
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(r.decisionPath(id), data, 0o644); err != nil {
		return fmt.Errorf("leave decision: %w", err)
	}
	return nil
}

// decisionPoll is how often a runner looks for what another terminal left.
const decisionPoll = 200 * time.Millisecond
