package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

// 'courier approve' finishes the turn and moves its reply out of the inbox,
// so the next run does not see it again.
func TestDecideSettlesTheReply(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	f.asking(id)
	if _, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Approve}, f.settler()); err != nil {
		t.Fatal(err)
	}
	if f.inInbox("reply.txt") || !exists(f.processed("reply.txt")) {
		t.Error("the finished reply is still in inbox/, not in inbox/processed/")
	}
	r, rec := f.runner(nil)
	if err := r.ProcessQueue(context.Background(), inbox.Queue{Dir: f.paths.Inbox}, "courier process"); err != nil {
		t.Fatal(err)
	}
	if refused := eventsOf[runner.ReplyRefused](rec); len(refused) != 0 {
		t.Errorf("the next 'courier process' warns: %q", refused[0].Reason)
	}
}

// Nothing is reported as started before the person answers.
func TestNothingStartedBeforeTheQuestion(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	p := answers(runner.Approve)
	var rec *recorder
	early := false
	p.asked = func(runner.Question) {
		for _, e := range eventsOf[runner.CommandStarted](rec) {
			early = early || e.Index == 1
		}
	}
	var r *runner.Runner
	r, rec = f.runner(p)
	if err := f.tryApply(r, id, "reply.txt", askReply); err != nil {
		t.Fatal(err)
	}
	if early {
		t.Errorf("CommandStarted for 'rm -rf junk' before the question: %s", eventTypes(rec.all()))
	}
}

// Each command's result is reported once, also when the turn resumes
// after a question in the same run.
func TestEachResultReportedOnce(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	r, rec := f.runner(answers(runner.Approve))
	if err := f.tryApply(r, id, "reply.txt", askReply); err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, e := range eventsOf[runner.CommandFinished](rec) {
		count[e.Index]++
	}
	for i := range 3 {
		if count[i] != 1 {
			t.Errorf("command %d reported finished %d times", i, count[i])
		}
	}
}

// The reply a waiting turn is applying is never applied to another
// session, even when it names none and another session is newer.
func TestWaitingReplyStaysWithItsSession(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	waiting := f.create("clean up")
	if err := f.tryApply(f.r, waiting, "reply.txt", askReply); !isA[*runner.WaitingError](err) {
		t.Fatal(err)
	}
	newer := f.create("another task")
	r, rec := f.runner(nil)
	r.ProcessQueue(context.Background(), inbox.Queue{Dir: f.paths.Inbox}, "courier process")
	if seqs, _ := f.store.Turns(newer); len(seqs) != 0 {
		t.Errorf("session %s's waiting reply was applied to session %s too", waiting, newer)
	}
	if s := eventsOf[runner.ReplySkipped](rec); len(s) != 1 || s[0].Session != waiting {
		t.Errorf("skipped events %+v, want one naming %s", s, waiting)
	}
	if !f.inInbox("reply.txt") {
		t.Error("the waiting reply left the inbox")
	}
}

// The person's last decision counts: one left earlier for a holder that
// went away does not override a later 'courier approve'.
func TestLastDecisionWins(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	f.asking(id)
	held, err := f.r.Hold(id, "courier watch")
	if err != nil {
		t.Fatal(err)
	}
	if handed, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Deny}, f.settler()); err != nil || !handed {
		t.Fatal(handed, err)
	}
	held.Release() // the watch stopped before taking the decision
	if handed, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Approve}, f.settler()); err != nil || handed {
		t.Fatal(handed, err)
	}
	if f.existsWS("junk") {
		t.Errorf("'courier approve' was overridden by the earlier 'courier deny': journal %q", f.kinds(id, 1))
	}
}

// Only an approval approves: a decision that decides nothing is refused.
func TestUndecidedDecisionRefused(t *testing.T) {
	for _, d := range []runner.Decision{{}, {Answer: runner.Later}, {Answer: runner.Stop}} {
		f := newFixture(t)
		f.writeWS("junk/file", "x")
		id := f.create("clean up")
		f.asking(id)
		_, err := f.r.Decide(context.Background(), id, d, f.settler())
		if err == nil || !f.existsWS("junk/file") {
			t.Errorf("Decide(%+v): %v; junk deleted: %v", d, err, !f.existsWS("junk/file"))
		}
	}
}

// A reply naming a session that does not exist leaves no lock file.
func TestNoLockFileForMissingSession(t *testing.T) {
	f := newFixture(t)
	f.create("x")
	p := f.save("deadbeef_reply.txt", "[MESSAGE]\nx\n[/MESSAGE]\n")
	f.r.ApplyFrom(context.Background(), &inbox.File{Path: p, Inbox: f.paths.Inbox}, "", "courier process")
	if _, err := os.Stat(filepath.Join(f.paths.Sessions, "deadbeef.lock")); err == nil {
		t.Error("sessions/deadbeef.lock was left for a session that does not exist")
	}
}
