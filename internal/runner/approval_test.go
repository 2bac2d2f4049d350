package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

// askReply has a command the default policy asks about between two that
// it allows.
const askReply = `[CREATE_FILE path="before.txt"]
before
[/CREATE_FILE]
[RUN_COMMAND]
rm -rf junk
[/RUN_COMMAND]
[CREATE_FILE path="after.txt"]
after
[/CREATE_FILE]
`

// askJournal is the journal of askReply's turn once it is carried out
// with the command approved; deniedJournal with it denied.
const (
	askJournal    = "begin apply/0 result/0 decision/1 start/1 result/1 apply/2 result/2"
	deniedJournal = "begin apply/0 result/0 decision/1 result/1 apply/2 result/2"
)

// journalFor is the journal of askReply's turn after the decision.
func journalFor(approved bool) string {
	if approved {
		return askJournal
	}
	return deniedJournal
}

// asking is a session waiting on askReply's question (the reply echoing
// the request's header, as the protocol asks): junk/ is still there,
// before.txt was created, after.txt not yet.
func (f *fixture) asking(id string) {
	f.t.Helper()
	var waiting *runner.WaitingError
	if err := f.tryApply(f.r, id, "reply.txt", "Session: "+id+"\nSequence: 1\n"+askReply); !errors.As(err, &waiting) {
		f.t.Fatalf("the turn did not stop at the question: %v", err)
	}
}

// pending is the question askReply's turn stops at.
func (f *fixture) pending() history.Pending {
	v := f.pol.Check("rm -rf junk")
	return history.Pending{Sequence: 1, Index: 1, Command: "rm -rf junk", Reason: v.Reason, Rule: v.Rule, Covers: v.Covers()}
}

// checkWaiting checks that session id waits on askReply's question and
// that nothing at or after the question was carried out.
func (f *fixture) checkWaiting(id string) {
	f.t.Helper()
	st := f.load(id)
	if st.Pending == nil || *st.Pending != f.pending() || st.SequenceNumber != 1 || len(f.replies(id)) != 0 {
		f.t.Errorf("saved state: pending %+v, sequence %d, want %+v", st.Pending, st.SequenceNumber, f.pending())
	}
	if !f.existsWS("before.txt") || !f.existsWS("junk/file") || f.existsWS("after.txt") {
		f.t.Error("the commands were not carried out up to the question, and only up to it")
	}
	if exists(f.requestPath(id, 2)) {
		f.t.Error("a turn waiting for the person wrote the next request")
	}
	if info, err := f.r.Status(id); err != nil || info.State != runner.StateAwaitingApproval || info.Unfinished != "reply.txt" || info.Pending == nil {
		f.t.Errorf("status of %s: %+v, %v", id, info, err)
	}
}

// checkApproved checks that askReply's turn finished with the command run.
func (f *fixture) checkApproved(id string) {
	f.t.Helper()
	if f.existsWS("junk") || !f.existsWS("after.txt") {
		f.t.Error("the approved command or the one after it was not carried out")
	}
	st := f.load(id)
	if st.Pending != nil || st.SequenceNumber != 2 || len(f.replies(id)) != 1 {
		f.t.Errorf("saved state: pending %+v, sequence %d", st.Pending, st.SequenceNumber)
	}
	if !strings.Contains(f.request(id, 2), "[OK] RUN_COMMAND: Ran 'rm -rf junk' (exit code 0) (approved by the user)\n") {
		f.t.Error("request 2 lacks the approved command's result")
	}
	if got := f.kinds(id, 1); got != askJournal {
		f.t.Errorf("journal %q, want %q", got, askJournal)
	}
}

// TestWaitsWithoutApprover: with nobody to ask ('courier process' without
// a terminal) the turn stops at the question and is not committed; other
// replies are refused until it is finished, and 'courier approve'
// finishes it.
func TestWaitsWithoutApprover(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	err := f.tryApply(f.r, id, "reply.txt", askReply)
	var waiting *runner.WaitingError
	if !errors.As(err, &waiting) || waiting.Session != id || waiting.Pending != f.pending() {
		t.Fatalf("error %v, want the session waiting for %+v", err, f.pending())
	}
	f.checkWaiting(id)
	if !f.inInbox("reply.txt") {
		t.Error("the waiting reply left the inbox")
	}
	needed := eventsOf[runner.ApprovalNeeded](f.rec)
	if len(needed) != 1 || needed[0] != (runner.ApprovalNeeded{Session: id, Sequence: 1, Index: 1, Command: "rm -rf junk", Env: f.pending().Env, Reason: f.pending().Reason, Covers: f.pending().Covers}) {
		t.Errorf("approval needed: %+v", needed)
	}

	// Another reply meanwhile asks the same question again and runs
	// nothing.
	err = f.tryApply(f.r, id, "other.txt", "[CREATE_FILE path=\"other.txt\"]\nx\n[/CREATE_FILE]\n")
	if !errors.As(err, &waiting) || waiting.Pending != f.pending() {
		t.Errorf("error %v, want the session still waiting", err)
	}
	if f.existsWS("other.txt") || !f.inInbox("other.txt") {
		t.Error("the other reply was carried out or moved")
	}
	f.checkWaiting(id)

	handed, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Approve}, f.settler())
	if err != nil || handed {
		t.Fatalf("decide: handed over %v, %v", handed, err)
	}
	f.checkApproved(id)
	if info, err := f.r.Status(id); err != nil || info.State != runner.StateWaiting || info.Unfinished != "" {
		t.Errorf("status after the decision: %+v, %v", info, err)
	}
	var notWaiting *runner.NotWaitingError
	if _, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Approve}, f.settler()); !errors.As(err, &notWaiting) {
		t.Errorf("a second decision: %v", err)
	}
}

// TestDecide answers the waiting question as 'courier approve' and
// 'courier deny' do: the decision is journaled and the turn carried on.
func TestDecide(t *testing.T) {
	cases := []struct {
		name     string
		decision runner.Decision
		record   history.Record
		result   string
	}{
		{"approve", runner.Decision{Answer: runner.Approve}, history.Record{Kind: history.RecordDecision, Index: 1, Approved: true},
			"[OK] RUN_COMMAND: Ran 'rm -rf junk' (exit code 0) (approved by the user)\n"},
		{"approve all", runner.Decision{Answer: runner.ApproveAll}, history.Record{Kind: history.RecordDecision, Index: 1, Approved: true, All: true},
			"[OK] RUN_COMMAND: Ran 'rm -rf junk' (exit code 0) (approved by the user)\n"},
		{"deny", runner.Decision{Answer: runner.Deny, Reason: "not now"}, history.Record{Kind: history.RecordDecision, Index: 1, Reason: "not now"},
			"[FAILED] RUN_COMMAND: Not run: 'rm -rf junk' was denied by the user: not now. Find another way, or explain in a MESSAGE why it is needed\n"},
		{"deny without a reason", runner.Decision{Answer: runner.Deny}, history.Record{Kind: history.RecordDecision, Index: 1},
			"[FAILED] RUN_COMMAND: Not run: 'rm -rf junk' was denied by the user. Find another way, or explain in a MESSAGE why it is needed\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.writeWS("junk/file", "x")
			id := f.create("task")
			var notWaiting *runner.NotWaitingError
			if _, err := f.r.Decide(context.Background(), id, tc.decision, f.settler()); !errors.As(err, &notWaiting) || notWaiting.Session != id {
				t.Errorf("decide without a question: %v", err)
			}
			if seqs, _ := f.store.Turns(id); len(seqs) != 0 {
				t.Errorf("a decision without a question left turns %v", seqs)
			}
			f.asking(id)
			// A session started later, not waiting, is not the one decided.
			other := f.create("other")

			r, rec := f.runner(nil)
			handed, err := r.Decide(context.Background(), "", tc.decision, f.settler())
			if err != nil || handed {
				t.Fatalf("decide: handed over %v, %v", handed, err)
			}
			var got *history.Record
			for _, rec := range f.records(id, 1) {
				if rec.Kind == history.RecordDecision {
					got = &rec
				}
			}
			if got == nil || got.Index != tc.record.Index || got.Approved != tc.record.Approved || got.All != tc.record.All || got.Reason != tc.record.Reason {
				t.Errorf("recorded %+v, want %+v", got, tc.record)
			}
			if got := f.kinds(id, 1); got != journalFor(tc.record.Approved) {
				t.Errorf("journal %q, want %q", got, journalFor(tc.record.Approved))
			}
			if !strings.Contains(f.request(id, 2), tc.result) {
				t.Errorf("request 2 lacks %q", tc.result)
			}
			if f.existsWS("junk") != !tc.record.Approved || !f.existsWS("after.txt") {
				t.Error("the decision was not followed, or the rest of the reply not carried out")
			}
			decided := eventsOf[runner.ApprovalDecided](rec)
			want := runner.ApprovalDecided{Session: id, Command: "rm -rf junk", Approved: tc.record.Approved, All: tc.record.All, Reason: tc.record.Reason}
			if len(decided) != 1 || decided[0] != want {
				t.Errorf("decided %+v, want %+v", decided, want)
			}
			st := f.load(id)
			if st.Pending != nil || st.SequenceNumber != 2 || slices.Contains(st.ApprovedRules, "rm -r") != tc.record.All {
				t.Errorf("saved state: pending %+v, sequence %d, approved rules %q", st.Pending, st.SequenceNumber, st.ApprovedRules)
			}
			if f.load(other).SequenceNumber != 1 {
				t.Error("the other session changed")
			}
		})
	}
}

// TestApproverAnswers: the person answers at the question and the turn
// goes on at once: the answer is journaled before the command starts, and
// the LLM reads what came of it.
func TestApproverAnswers(t *testing.T) {
	cases := []struct {
		name     string
		decision runner.Decision
		junk     bool
		result   string
	}{
		{"approve", runner.Decision{Answer: runner.Approve}, false, "[OK] RUN_COMMAND: Ran 'rm -rf junk' (exit code 0) (approved by the user)\n"},
		{"deny with a reason", runner.Decision{Answer: runner.Deny, Reason: "keep the junk"}, true,
			"[FAILED] RUN_COMMAND: Not run: 'rm -rf junk' was denied by the user: keep the junk. Find another way, or explain in a MESSAGE why it is needed\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.writeWS("junk/file", "x")
			id := f.create("clean up")
			p := &person{answers: []runner.Decision{tc.decision}}
			r, rec := f.runner(p)
			if err := f.tryApply(r, id, "reply.txt", askReply); err != nil {
				t.Fatal(err)
			}
			want := runner.Question{Session: id, Sequence: 1, Index: 1, Command: "rm -rf junk", Reason: f.pending().Reason, Covers: f.pending().Covers}
			if q := p.asks(); len(q) != 1 || q[0] != want {
				t.Errorf("asked %+v, want %+v", q, want)
			}
			if f.existsWS("junk") != tc.junk || !f.existsWS("after.txt") {
				t.Error("the answer was not followed, or the rest of the reply not carried out")
			}
			if !strings.Contains(f.request(id, 2), tc.result) {
				t.Errorf("request 2 lacks %q", tc.result)
			}
			if got := f.kinds(id, 1); got != journalFor(!tc.junk) {
				t.Errorf("journal %q, want %q", got, journalFor(!tc.junk))
			}
			events := rec.all()
			needed := position(events, func(e any) bool { _, ok := e.(runner.ApprovalNeeded); return ok })
			decided := position(events, func(e any) bool {
				d, ok := e.(runner.ApprovalDecided)
				return ok && d == runner.ApprovalDecided{Session: id, Command: "rm -rf junk", Approved: !tc.junk, Reason: tc.decision.Reason}
			})
			finished := position(events, func(e any) bool {
				c, ok := e.(runner.CommandFinished)
				return ok && c.Index == 1 && c.Result.Success() == !tc.junk
			})
			if needed < 0 || decided < needed || finished < decided {
				t.Errorf("events out of order or missing: %s", eventTypes(events))
			}
			if st := f.load(id); st.Pending != nil || st.SequenceNumber != 2 || !exists(f.processed("reply.txt")) {
				t.Errorf("the turn was not committed: pending %+v, sequence %d", st.Pending, st.SequenceNumber)
			}
		})
	}
}

// TestApproveAllLasts: "all like it" covers the later commands like it in
// the same reply, and, through the session state, in the next turns of a
// later run that has nobody to ask.
func TestApproveAllLasts(t *testing.T) {
	f := newFixture(t)
	for _, d := range []string{"junk", "junk2", "junk3", "other"} {
		f.writeWS(d+"/file", "x")
	}
	id := f.create("clean up")
	p := answers(runner.ApproveAll)
	r, _ := f.runner(p)
	if err := f.tryApply(r, id, "r1.txt", "[RUN_COMMAND]\nrm -rf junk\n[/RUN_COMMAND]\n[RUN_COMMAND]\nrm -rf junk2\n[/RUN_COMMAND]\n"); err != nil {
		t.Fatal(err)
	}
	if q := p.asks(); len(q) != 1 || q[0].Command != "rm -rf junk" {
		t.Errorf("asked %+v, want one question", q)
	}
	if f.existsWS("junk") || f.existsWS("junk2") {
		t.Error("the approved commands did not run")
	}
	st := f.load(id)
	rules := f.pol.Check("rm -rf junk").Rules
	for _, rule := range rules {
		if !slices.Contains(st.ApprovedRules, rule) {
			t.Errorf("approved rules %q lack %q", st.ApprovedRules, rule)
		}
	}

	// courier process, without a terminal, in a later run: a command like
	// it runs without a question; one the rules do not cover still asks.
	if err := f.tryApply(f.r, id, "r2.txt", "[RUN_COMMAND]\nrm -rf junk3\n[/RUN_COMMAND]\n"); err != nil {
		t.Fatalf("a command like an approved one: %v", err)
	}
	if f.existsWS("junk3") || len(eventsOf[runner.ApprovalNeeded](f.rec)) != 0 {
		t.Error("the command like the approved one was asked about or did not run")
	}
	var waiting *runner.WaitingError
	if err := f.tryApply(f.r, id, "r3.txt", "[RUN_COMMAND]\ngit push origin main\n[/RUN_COMMAND]\n"); !errors.As(err, &waiting) || waiting.Pending.Command != "git push origin main" {
		t.Errorf("another kind of command: %v, want a question", err)
	}
	if !f.existsWS("other/file") {
		t.Error("something else was deleted")
	}
}

// TestApproverStops: "decide later" where nobody waits ('w' in courier
// process) leaves the session waiting, saved, with nothing after the
// question run.
func TestApproverStops(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	p := answers(runner.Stop)
	r, rec := f.runner(p)
	err := f.tryApply(r, id, "reply.txt", askReply)
	var waiting *runner.WaitingError
	if !errors.As(err, &waiting) || waiting.Session != id || waiting.Pending != f.pending() {
		t.Fatalf("error %v, want the session waiting", err)
	}
	if len(p.asks()) != 1 || len(eventsOf[runner.ApprovalDecided](rec)) != 0 {
		t.Errorf("asked %d times; decided %+v", len(p.asks()), eventsOf[runner.ApprovalDecided](rec))
	}
	f.checkWaiting(id)
	if !f.inInbox("reply.txt") {
		t.Error("the waiting reply left the inbox")
	}
	if f.kinds(id, 1) != "begin apply/0 result/0" {
		t.Errorf("journal %q: the question must leave no decision", f.kinds(id, 1))
	}
}

// TestApproverFails: an approver that cannot ask (the terminal is gone)
// ends the run with its error; the session is saved waiting, and a later
// decision goes on with it.
func TestApproverFails(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	broken := errors.New("read /dev/tty: input/output error")
	r, _ := f.runner(&person{err: broken})
	if err := f.tryApply(r, id, "reply.txt", askReply); !errors.Is(err, broken) {
		t.Fatalf("error %v, want the approver's", err)
	}
	f.checkWaiting(id)
	if handed, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Approve}, f.settler()); err != nil || handed {
		t.Fatalf("decide: %v, %v", handed, err)
	}
	f.checkApproved(id)
}

// TestDecisionJournaledBeforeCommand: the answer is in the journal before
// the command starts, so a run that dies right after the answer does not
// ask again when the turn is finished; one that dies before it does.
func TestDecisionJournaledBeforeCommand(t *testing.T) {
	const reply = "[RUN_COMMAND]\nrm -rf junk && echo ran >> runs.txt\n[/RUN_COMMAND]\n[CREATE_FILE path=\"after.txt\"]\nafter\n[/CREATE_FILE]\n"
	cases := []struct {
		name string
		keep int // journal records kept
		ask  bool
	}{
		{"died after the answer", 2, false},
		{"died before the answer", 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.writeWS("junk/file", "x")
			id := f.create("clean up")
			var waitingState []byte
			p := answers(runner.Approve)
			p.asked = func(runner.Question) { waitingState = f.snapshot(id) }
			r, _ := f.runner(p)
			if err := f.tryApply(r, id, "reply.txt", reply); err != nil {
				t.Fatal(err)
			}
			if got := f.kinds(id, 1); got != "begin decision/0 start/0 result/0 apply/1 result/1" {
				t.Fatalf("journal %q: the decision must come before the start", got)
			}

			// Put everything back as it was at the crash.
			f.crashAfter(id, 1, tc.keep)
			f.restore(id, waitingState)
			for _, p := range []string{f.requestPath(id, 2), f.wsPath("runs.txt"), f.wsPath("after.txt")} {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
			f.writeWS("junk/file", "x")
			if err := os.Rename(f.processed("reply.txt"), filepath.Join(f.paths.Inbox, "reply.txt")); err != nil {
				t.Fatal(err)
			}

			// The next run finishes the turn.
			again := answers(runner.Approve)
			r, rec := f.runner(again)
			if err := r.ProcessQueue(context.Background(), inbox.Queue{Dir: f.paths.Inbox}, "courier process"); err != nil {
				t.Fatal(err)
			}
			if asked := len(again.asks()) > 0; asked != tc.ask {
				t.Errorf("asked again: %v, want %v", asked, tc.ask)
			}
			if n := len(eventsOf[runner.ApprovalNeeded](rec)); (n > 0) != tc.ask {
				t.Errorf("%d approvals reported needed", n)
			}
			if n := lineCount(f.wsPath("runs.txt")); n != 1 || f.existsWS("junk") || !f.existsWS("after.txt") {
				t.Errorf("the approved command ran %d times", n)
			}
			if st := f.load(id); st.Pending != nil || st.SequenceNumber != 2 || !exists(f.processed("reply.txt")) {
				t.Errorf("the turn was not committed: pending %+v, sequence %d", st.Pending, st.SequenceNumber)
			}
			if got := f.kinds(id, 1); strings.Count(got, "decision/0") != 1 || strings.Count(got, "start/0") != 1 {
				t.Errorf("journal %q", got)
			}
		})
	}
}
