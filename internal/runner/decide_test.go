package runner_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/syncbuf"

	"github.com/courier-agent/courier/internal/console"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/runner"
)

// decisionNote is where a decision given while another process holds the
// session waits for it.
func (f *fixture) decisionNote(id string) string {
	return filepath.Join(f.paths.Sessions, id+".decision")
}

// terminal is the person's terminal as 'courier watch' asks on it: its
// keyboard gives typed (then nothing more until the test ends), and screen
// shows what courier wrote.
func (f *fixture) terminal(typed string) (*console.Terminal, *syncbuf.Buffer) {
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, typed)
	}()
	f.t.Cleanup(func() { pw.Close() })
	screen := &syncbuf.Buffer{}
	return console.NewTerminal(pr, screen, runner.Later), screen
}

// TestDecideHandedOver: while 'courier watch' waits on a question, a
// decision given with 'courier approve' or 'courier deny' in another
// terminal is handed to it; the watch journals it and carries on, whether
// the person had answered "decide later" or not answered at all.
func TestDecideHandedOver(t *testing.T) {
	cases := []struct {
		name string
		// typed is what the person types at the watch's question.
		typed string
		// shown is on the watch's terminal once it waits for the decision.
		shown    string
		decision runner.Decision
	}{
		{"after decide later", "w\n", "courier: waiting; answer with 'courier approve", runner.Decision{Answer: runner.Approve}},
		{"while asking", "", "Run it? [y]es, [n]o", runner.Decision{Answer: runner.Deny, Reason: "not today"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.writeWS("junk/file", "x")
			id := f.create("clean up")
			f.save("reply.txt", askReply)
			term, screen := f.terminal(tc.typed)
			watch, watchRec := f.runner(term)
			sv := f.serve(watch, id, f.watcher(id))
			waitFor(t, "the question on the watch's terminal", func() bool { return strings.Contains(screen.String(), tc.shown) })
			info, err := f.r.Status(id)
			if err != nil || info.State != runner.StateAwaitingApproval || info.Holder == nil || info.Holder.Doing != "waiting for approval of 'rm -rf junk'" {
				t.Fatalf("status while the watch waits: %+v, %v", info, err)
			}

			// courier approve / deny, in another terminal.
			decide, decideRec := f.runner(nil)
			handed, err := decide.Decide(context.Background(), id, tc.decision, f.settler())
			if err != nil || !handed {
				t.Fatalf("decide: handed over %v, %v", handed, err)
			}
			if n := len(eventsOf[runner.CommandFinished](decideRec)); n != 0 {
				t.Errorf("the deciding process carried out %d commands itself", n)
			}

			// The watch goes on: the rest of the reply, the next request,
			// and it waits for the reply to that.
			waitFor(t, "request 2", func() bool { return exists(f.requestPath(id, 2)) })
			waitFor(t, "the watch to wait for the next reply", func() bool {
				w := eventsOf[runner.WaitingForReply](watchRec)
				return len(w) > 0 && w[len(w)-1].Sequence == 2
			})
			approved := tc.decision.Answer == runner.Approve
			if f.existsWS("junk") == approved || !f.existsWS("after.txt") {
				t.Error("the decision was not followed, or the rest of the reply not carried out")
			}
			if got := f.kinds(id, 1); got != journalFor(approved) {
				t.Errorf("journal %q, want %q", got, journalFor(approved))
			}
			decided := eventsOf[runner.ApprovalDecided](watchRec)
			want := runner.ApprovalDecided{Session: id, Command: "rm -rf junk", Approved: approved, Reason: tc.decision.Reason, Elsewhere: true}
			if len(decided) != 1 || decided[0] != want {
				t.Errorf("the watch reported %+v, want %+v", decided, want)
			}
			if exists(f.decisionNote(id)) {
				t.Error("the decision note was left behind")
			}
			if strings.Count(screen.String(), "needs your approval") != 1 {
				t.Errorf("the terminal asked more than once:\n%s", screen.String())
			}

			f.drop("done.txt", "[DONE]\nCleaned up.\n[/DONE]\n")
			if err := sv.wait(t); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			st := f.load(id)
			if !st.IsComplete || st.Pending != nil || len(f.replies(id)) != 2 || !exists(f.processed("reply.txt")) || !exists(f.processed("done.txt")) {
				t.Errorf("after DONE: complete %v, pending %+v, %d replies", st.IsComplete, st.Pending, len(f.replies(id)))
			}
		})
	}
}

// TestDecisionNoteTakenByNextHolder: a decision handed to a process that
// then went away without taking it is taken by the next run that holds the
// session, which does not ask again.
func TestDecisionNoteTakenByNextHolder(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	f.asking(id)

	held, err := f.r.Hold(id, "courier watch")
	if err != nil {
		t.Fatal(err)
	}
	handed, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Deny, Reason: "keep it"}, f.settler())
	if err != nil || !handed {
		t.Fatalf("decide while held: handed over %v, %v", handed, err)
	}
	if !exists(f.decisionNote(id)) {
		t.Fatal("no decision was left for the holder")
	}
	if f.kinds(id, 1) != "begin apply/0 result/0" {
		t.Errorf("the deciding process wrote the journal of a session it did not hold: %q", f.kinds(id, 1))
	}
	held.Release()
	f.checkWaiting(id)

	p := &person{}
	r, rec := f.runner(p)
	s, err := r.Hold(id, "courier watch")
	if err != nil {
		t.Fatal(err)
	}
	ok, err := s.Recover(context.Background(), nil)
	s.Release()
	if !ok || err != nil {
		t.Fatalf("recover: %v, %v", ok, err)
	}
	if len(p.asks()) != 0 || len(eventsOf[runner.ApprovalNeeded](rec)) != 0 {
		t.Errorf("asked again: %+v", p.asks())
	}
	decided := eventsOf[runner.ApprovalDecided](rec)
	if want := (runner.ApprovalDecided{Session: id, Command: "rm -rf junk", Reason: "keep it", Elsewhere: true}); len(decided) != 1 || decided[0] != want {
		t.Errorf("decided %+v, want %+v", decided, want)
	}
	if !f.existsWS("junk/file") || !f.existsWS("after.txt") || f.kinds(id, 1) != deniedJournal {
		t.Errorf("the denial was not followed: journal %q", f.kinds(id, 1))
	}
	if !strings.Contains(f.request(id, 2), "Not run: 'rm -rf junk' was denied by the user: keep it.") || exists(f.decisionNote(id)) {
		t.Error("request 2 lacks the denial, or the note was left")
	}
}

// TestDecisionNoteForAnotherQuestion: a note that answers another question
// than the one waiting is dropped, not applied to it.
func TestDecisionNoteForAnotherQuestion(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	f.asking(id)
	writeFile(t, f.decisionNote(id), `{"sequence":1,"index":0,"approved":true}`)
	s, err := f.r.Hold(id, "courier process")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Recover(context.Background(), nil)
	s.Release()
	var waiting *runner.WaitingError
	if !errors.As(err, &waiting) {
		t.Fatalf("recover: %v, want the question asked again", err)
	}
	f.checkWaiting(id)
	if exists(f.decisionNote(id)) {
		t.Error("the stale note was kept")
	}
}

// TestInterruptWhileAsking: Ctrl-C while the terminal asks stops the run;
// the session is saved waiting, and a later decision goes on with it.
func TestInterruptWhileAsking(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	f.save("reply.txt", askReply)
	term, screen := f.terminal("")
	watch, _ := f.runner(term)
	sv := f.serve(watch, id, f.watcher(id))
	waitFor(t, "the question on the terminal", func() bool { return strings.Contains(screen.String(), "Run it? [y]es") })
	sv.cancel()
	err := sv.wait(t)
	var stopped *runner.InterruptedError
	if !errors.As(err, &stopped) || stopped.Session != id || !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve after Ctrl-C: %v", err)
	}
	f.checkWaiting(id)
	if info, err := f.r.Status(id); err != nil || info.Holder != nil {
		t.Errorf("status after the run ended: %+v, %v", info, err)
	}

	handed, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Approve}, f.settler())
	if err != nil || handed {
		t.Fatalf("decide: handed over %v, %v", handed, err)
	}
	f.checkApproved(id)
}

// TestDeniedNoteApprovesNothingElse: a note from another process that
// denies "all like it" denies the one command; it approves nothing for
// later.
func TestDeniedNoteApprovesNothingElse(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	f.asking(id)
	writeFile(t, f.decisionNote(id), `{"sequence":1,"index":1,"approved":false,"all":true}`)
	s, err := f.r.Hold(id, "courier watch")
	if err != nil {
		t.Fatal(err)
	}
	ok, err := s.Recover(context.Background(), nil)
	s.Release()
	if !ok || err != nil {
		t.Fatalf("recover: %v, %v", ok, err)
	}
	for _, r := range f.records(id, 1) {
		if r.Kind == history.RecordDecision && (r.Approved || r.All) {
			t.Errorf("journaled %+v", r)
		}
	}
	if st := f.load(id); len(st.ApprovedRules) != 0 || !f.existsWS("junk/file") {
		t.Errorf("a denial approved rules %q or ran the command", st.ApprovedRules)
	}
}
