package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

// saidIn reports whether a request shows msg as the person's message.
func saidIn(request, msg string) bool {
	return strings.Contains(request, "## Message from the user\n"+msg+"\n")
}

// wordsLeft counts the person's words still waiting for a session.
func (f *fixture) wordsLeft(id string) int {
	f.t.Helper()
	entries, err := os.ReadDir(filepath.Join(f.store.Folder(id), "said"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// TestSayRewritesTheWaitingRequest: the request waiting for a reply is
// written again with the message; the request after it no longer shows it.
func TestSayRewritesTheWaitingRequest(t *testing.T) {
	f := newFixture(t)
	id := f.create("write notes")
	said, err := f.r.Say("", "  keep it short  ", false)
	if err != nil || said != (runner.Said{Session: id, Sequence: 1, Rewritten: true}) {
		t.Fatalf("Say = %+v, %v", said, err)
	}
	if !saidIn(f.request(id, 1), "keep it short") {
		t.Errorf("request 1 lacks the message:\n%s", f.request(id, 1))
	}
	if w := eventsOf[runner.RequestWritten](f.rec); len(w) == 0 || !w[len(w)-1].Updated || w[len(w)-1].Sequence != 1 {
		t.Errorf("request written events: %+v", w)
	}
	if _, err := f.r.Say(id, "and use tabs", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.request(id, 1), "## Message from the user\nkeep it short\nand use tabs\n") {
		t.Errorf("request 1 lacks the two messages in order:\n%s", f.request(id, 1))
	}
	if n := f.wordsLeft(id); n != 0 {
		t.Errorf("%d messages still waiting after the request showed them", n)
	}
	f.apply(id, "reply.txt", "[CREATE_FILE path=\"notes.txt\"]\nshort\n[/CREATE_FILE]\n")
	if strings.Contains(f.request(id, 2), "Message from the user") {
		t.Errorf("request 2 shows the message again:\n%s", f.request(id, 2))
	}
}

// TestSayWhileAwaitingApproval: words said while a turn waits for an
// approval are not lost when the turn ends: the request it writes shows
// them (and only that request).
func TestSayWhileAwaitingApproval(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	f.asking(id)
	said, err := f.r.Say(id, "do not delete the junk folder", false)
	if err != nil || said.Rewritten || said.Holder != "" {
		t.Fatalf("Say = %+v, %v; want the message kept for the next request", said, err)
	}
	if saidIn(f.request(id, 1), "do not delete the junk folder") {
		t.Error("request 1, already answered, was written again")
	}
	if _, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Deny}, f.settler()); err != nil {
		t.Fatal(err)
	}
	if !saidIn(f.request(id, 2), "do not delete the junk folder") {
		t.Errorf("request 2 lacks the message said during the turn:\n%s", f.request(id, 2))
	}
	if n := f.wordsLeft(id); n != 0 {
		t.Errorf("%d messages still waiting after request 2 showed them", n)
	}
	f.apply(id, "next.txt", "[RUN_COMMAND]\ntrue\n[/RUN_COMMAND]\n")
	if strings.Contains(f.request(id, 3), "Message from the user") {
		t.Errorf("request 3 shows the message again:\n%s", f.request(id, 3))
	}
}

// TestSayToAWatch: while 'courier watch' holds the session and waits for a
// reply, the words are given to it, and it writes the request again.
func TestSayToAWatch(t *testing.T) {
	f := newFixture(t)
	id := f.create("write notes")
	watch, watchRec := f.runner(nil)
	f.serve(watch, id, f.watcher(id))
	waitFor(t, "the watch to wait for a reply", func() bool { return len(eventsOf[runner.WaitingForReply](watchRec)) > 0 })
	said, err := f.r.Say("", "the notes go in docs/", false)
	if err != nil || !said.Heard || said.Holder != "courier watch" {
		t.Fatalf("Say = %+v, %v; want the words heard by the watch", said, err)
	}
	if !saidIn(f.request(id, 1), "the notes go in docs/") {
		t.Errorf("request 1 lacks the message:\n%s", f.request(id, 1))
	}
	updatedOf := func() []int {
		var updated []int
		for _, w := range eventsOf[runner.RequestWritten](watchRec) {
			if w.Updated {
				updated = append(updated, w.Sequence)
			}
		}
		return updated
	}
	// Say returns once the words are taken; the watch reports the request
	// it wrote with them just after.
	waitFor(t, "the watch to report the updated request", func() bool { return len(updatedOf()) > 0 })
	if updated := updatedOf(); len(updated) != 1 || updated[0] != 1 {
		t.Errorf("the watch reported requests %v updated, want request 1 once", updated)
	}
	f.drop("reply.txt", "[CREATE_FILE path=\"docs/notes.txt\"]\nx\n[/CREATE_FILE]\n")
	waitFor(t, "request 2", func() bool { return exists(f.requestPath(id, 2)) })
	if strings.Contains(f.request(id, 2), "Message from the user") {
		t.Errorf("request 2 shows the message again:\n%s", f.request(id, 2))
	}
}

// TestSayToAWatchAwaitingApproval: a watch that waits for an approval
// takes the words when its turn ends, into the request it writes.
func TestSayToAWatchAwaitingApproval(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	id := f.create("clean up")
	f.save("reply.txt", askReply)
	term, screen := f.terminal("w\n")
	watch, _ := f.runner(term)
	sv := f.serve(watch, id, f.watcher(id))
	waitFor(t, "the watch to wait for the decision", func() bool { return strings.Contains(screen.String(), "courier: waiting") })
	said, err := f.r.Say(id, "keep the junk", false)
	if err != nil || said.Heard || said.Holder != "courier watch" {
		t.Fatalf("Say = %+v, %v; want the words left for the watch's next request", said, err)
	}
	if handed, err := f.r.Decide(context.Background(), id, runner.Decision{Answer: runner.Deny}, f.settler()); err != nil || !handed {
		t.Fatalf("decide: handed over %v, %v", handed, err)
	}
	waitFor(t, "request 2", func() bool { return exists(f.requestPath(id, 2)) })
	if !saidIn(f.request(id, 2), "keep the junk") {
		t.Errorf("request 2 lacks the message:\n%s", f.request(id, 2))
	}
	sv.cancel()
	sv.wait(t)
}

// TestSayRefused: nothing to say, a complete session; without an id, the
// most recently updated incomplete session is meant.
func TestSayRefused(t *testing.T) {
	f := newFixture(t)
	if _, err := f.r.Say("", "hello", false); !errors.Is(err, runner.ErrNoSession) {
		t.Errorf("Say with no session: %v", err)
	}
	open := f.create("still going")
	done := f.create("finished")
	f.apply(done, "done.txt", "[DONE]\nok\n[/DONE]\n")
	if _, err := f.r.Say(open, " \n ", false); !errors.As(err, new(runner.EmptyMessageError)) {
		t.Errorf("Say of nothing: %v", err)
	}
	var complete *runner.CompleteError
	if _, err := f.r.Say(done, "more", false); !errors.As(err, &complete) || complete.Session != done {
		t.Errorf("Say to a complete session: %v", err)
	}
	if n := f.wordsLeft(done); n != 0 {
		t.Errorf("%d words left for a complete session", n)
	}
	said, err := f.r.Say("", "hello", false)
	if err != nil || said.Session != open {
		t.Errorf("Say without an id went to %+v, %v; want the incomplete session %s", said, err, open)
	}
}

// protocolOnce is courier run with protocol = "first".
func (f *fixture) protocolOnce() *runner.Runner {
	d := config.Defaults()
	return runner.New(runner.Config{
		Paths:        f.paths,
		Limits:       f.limits,
		Commands:     runner.Commands{Timeout: d.CommandTimeout, MaxOutput: d.MaxOutput, Env: os.Environ(), KeepEnv: d.KeepEnv, Policy: f.pol},
		FrontEnds:    f.frontEnds(),
		Reporter:     &recorder{},
		ProtocolOnce: true,
	})
}

// TestSayNewChat: the request is written again with the full protocol for
// a fresh chat, where protocol = "first" had put the reminder.
func TestSayNewChat(t *testing.T) {
	f := newFixture(t)
	r := f.protocolOnce()
	id, err := r.Create("write notes", runner.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := &inbox.File{Path: f.save("r.txt", "[RUN_COMMAND]\ntrue\n[/RUN_COMMAND]\n"), Inbox: f.paths.Inbox}
	if err := r.ApplyFrom(context.Background(), src, id, "courier process"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(f.request(id, 2), "\nCOMMANDS\n") {
		t.Fatal("request 2 has the full protocol before --new-chat")
	}
	if _, err := r.Say(id, "", true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.request(id, 2), "\nCOMMANDS\n") {
		t.Errorf("request 2 lacks the full protocol after --new-chat:\n%s", f.request(id, 2))
	}
}

// TestContinue: a complete session is reopened with a follow-up task, in
// the same workspace, at the next request.
func TestContinue(t *testing.T) {
	f := newFixture(t)
	id := f.create("write notes")
	if _, err := f.r.Continue(id, "more"); !errors.As(err, new(*runner.NotCompleteError)) {
		t.Errorf("Continue of an incomplete session: %v", err)
	}
	f.apply(id, "done.txt", "[CREATE_FILE path=\"notes.txt\"]\nx\n[/CREATE_FILE]\n[DONE]\nok\n[/DONE]\n")
	if _, err := f.r.Continue(id, "  "); !errors.As(err, new(runner.EmptyTaskError)) {
		t.Errorf("Continue without a task: %v", err)
	}
	got, err := f.r.Continue("", "now add a second line")
	if err != nil || got != id {
		t.Fatalf("Continue = %q, %v", got, err)
	}
	st := f.load(id)
	if st.IsComplete || st.SequenceNumber != 2 || len(st.FollowUps) != 1 {
		t.Errorf("state after Continue: complete %v, sequence %d, follow-ups %q", st.IsComplete, st.SequenceNumber, st.FollowUps)
	}
	req := f.request(id, 2)
	for _, want := range []string{"Follow-up task 1: now add a second line\n", "=== PROMPT ===\nnow add a second line\n", "notes.txt"} {
		if !strings.Contains(req, want) {
			t.Errorf("request 2 lacks %q:\n%s", want, req)
		}
	}
}
