package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

// replyNames lists the replies a session applied, in order.
func (f *fixture) replyNames(id string) []string {
	f.t.Helper()
	var out []string
	for _, r := range f.replies(id) {
		out = append(out, r.File)
	}
	return out
}

// TestServePassesOverOtherSessions: 'courier watch' leaves a reply for
// another session where it is, says so once, and goes on waiting for its
// own.
func TestServePassesOverOtherSessions(t *testing.T) {
	f := newFixture(t)
	id := f.create("mine")
	other := f.create("theirs")
	r, rec := f.runner(nil)
	sv := f.serve(r, id, f.watcher(id))
	theirs := f.drop(other+"_reply.txt", "[CREATE_FILE path=\"theirs.txt\"]\nx\n[/CREATE_FILE]\n")
	waitFor(t, "the other session's reply to be passed over", func() bool { return len(eventsOf[runner.ReplySkipped](rec)) > 0 })
	f.drop("mine.txt", "[CREATE_FILE path=\"mine.txt\"]\nx\n[/CREATE_FILE]\n")
	waitFor(t, "request 2", func() bool { return exists(f.requestPath(id, 2)) })
	f.drop("done.txt", "Session: "+id+"\n[DONE]\nDone.\n[/DONE]\n")
	if err := sv.wait(t); err != nil {
		t.Fatal(err)
	}
	skipped := eventsOf[runner.ReplySkipped](rec)
	if len(skipped) != 1 || skipped[0] != (runner.ReplySkipped{Name: other + "_reply.txt", Session: other}) {
		t.Errorf("passed over %+v, want once", skipped)
	}
	if !exists(theirs) || f.existsWS("theirs.txt") || f.load(other).SequenceNumber != 1 {
		t.Error("the other session's reply was moved or carried out")
	}
	if got := f.replyNames(id); !slices.Equal(got, []string{"mine.txt", "done.txt"}) || !f.load(id).IsComplete {
		t.Errorf("applied %v", got)
	}
}

// TestServeSetsAsideUnusable: a reply that can never be applied is moved
// into rejected/ and reported; the watch goes on with the next reply.
func TestServeSetsAsideUnusable(t *testing.T) {
	f := newFixture(t)
	id := f.create("task")
	r, rec := f.runner(nil)
	sv := f.serve(r, id, f.watcher(id))
	f.drop("picture.txt", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	waitFor(t, "the unusable reply to be set aside", func() bool { return len(eventsOf[runner.ReplySetAside](rec)) > 0 })
	f.drop("done.txt", "[CREATE_FILE path=\"a.txt\"]\na\n[/CREATE_FILE]\n[DONE]\nDone.\n[/DONE]\n")
	if err := sv.wait(t); err != nil {
		t.Fatal(err)
	}
	aside := eventsOf[runner.ReplySetAside](rec)
	if len(aside) != 1 || aside[0].MovedTo != f.rejected("picture.txt") || !isA[*reply.NotTextError](aside[0].Err) {
		t.Fatalf("set aside %+v", aside)
	}
	if !exists(f.rejected("picture.txt")) || f.inInbox("picture.txt") {
		t.Error("the unusable reply was not moved into rejected/")
	}
	if got := f.replyNames(id); !slices.Equal(got, []string{"done.txt"}) || !f.existsWS("a.txt") {
		t.Errorf("applied %v", got)
	}
}

// TestServeEither: replies are taken from whichever of two places gets
// one first, and each goes back to where it came from.
func TestServeEither(t *testing.T) {
	f := newFixture(t)
	id := f.create("task")
	downloads := filepath.Join(f.paths.Root, "downloads")
	if err := os.Mkdir(downloads, 0o755); err != nil {
		t.Fatal(err)
	}
	r, rec := f.runner(nil)
	other := inbox.NewWatcher(downloads, id, watchOptions())
	sv := f.serve(r, id, runner.Either(f.watcher(id), other))
	waitFor(t, "the watch to wait", func() bool { return len(eventsOf[runner.WaitingForReply](rec)) > 0 })
	if from := eventsOf[runner.WaitingForReply](rec)[0].From; from != "in inbox/ or in downloads/" {
		t.Errorf("waiting in %q", from)
	}
	writeFile(t, filepath.Join(downloads, ".part"), "[CREATE_FILE path=\"one.txt\"]\n1\n[/CREATE_FILE]\n")
	if err := os.Rename(filepath.Join(downloads, ".part"), filepath.Join(downloads, "chat.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "request 2", func() bool { return exists(f.requestPath(id, 2)) })
	f.drop("done.txt", "[DONE]\nDone.\n[/DONE]\n")
	if err := sv.wait(t); err != nil {
		t.Fatal(err)
	}
	if got := f.replyNames(id); !slices.Equal(got, []string{"chat.md", "done.txt"}) || !f.existsWS("one.txt") {
		t.Errorf("applied %v", got)
	}
	if !exists(filepath.Join(downloads, "processed", "chat.md")) || !exists(f.processed("done.txt")) {
		t.Error("a reply was not moved into processed/ where it came from")
	}
}

// TestEitherKeepsBoth: when both sources have a reply at once, the one
// not taken first is kept for the next turn, not lost; when both have no
// more, neither has.
func TestEitherKeepsBoth(t *testing.T) {
	f := newFixture(t)
	id := f.create("task")
	a := &inbox.File{Path: f.save("a.txt", "[CREATE_FILE path=\"a.txt\"]\na\n[/CREATE_FILE]\n"), Inbox: f.paths.Inbox}
	b := &inbox.File{Path: f.save("b.txt", "[CREATE_FILE path=\"b.txt\"]\nb\n[/CREATE_FILE]\n"), Inbox: f.paths.Inbox}
	s, err := f.r.Hold(id, "courier process")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if err := s.Serve(context.Background(), runner.Either(a, b)); err != nil {
		t.Fatal(err)
	}
	got := f.replyNames(id)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a.txt", "b.txt"}) || !f.existsWS("a.txt") || !f.existsWS("b.txt") || f.load(id).SequenceNumber != 3 {
		t.Errorf("applied %v", got)
	}
	if !exists(f.processed("a.txt")) || !exists(f.processed("b.txt")) {
		t.Error("the replies were not moved into processed/")
	}
}

// TestProcessQueue: the replies waiting in the inbox go to the sessions
// they name, those naming none to the most recently updated incomplete
// session, each session's in the order they were saved.
func TestProcessQueue(t *testing.T) {
	f := newFixture(t)
	older := f.create("first")
	newer := f.create("second")
	f.save(older+"_reply.txt", "[CREATE_FILE path=\"older1.txt\"]\nx\n[/CREATE_FILE]\n")
	f.save("unnamed.txt", "[CREATE_FILE path=\"unnamed.txt\"]\nx\n[/CREATE_FILE]\n")
	f.save("named.md", "Session: "+newer+"\n[CREATE_FILE path=\"newer.txt\"]\nx\n[/CREATE_FILE]\n")
	f.save("zz-older.txt", "Session: "+older+"\nSequence: 2\n[CREATE_FILE path=\"older2.txt\"]\nx\n[/CREATE_FILE]\n")
	r, rec := f.runner(nil)
	if err := r.ProcessQueue(context.Background(), inbox.Queue{Dir: f.paths.Inbox}, "courier process"); err != nil {
		t.Fatal(err)
	}
	if got := f.replyNames(older); !slices.Equal(got, []string{older + "_reply.txt", "zz-older.txt"}) {
		t.Errorf("%s applied %v", older, got)
	}
	if got := f.replyNames(newer); !slices.Equal(got, []string{"unnamed.txt", "named.md"}) {
		t.Errorf("%s applied %v", newer, got)
	}
	var taken []string
	for _, e := range eventsOf[runner.ReplyTaken](rec) {
		taken = append(taken, e.Name)
	}
	if want := []string{older + "_reply.txt", "zz-older.txt", "unnamed.txt", "named.md"}; !slices.Equal(taken, want) {
		t.Errorf("applied in the order %v, want %v", taken, want)
	}
	for _, p := range []string{"older1.txt", "older2.txt", "unnamed.txt", "newer.txt"} {
		if !f.existsWS(p) {
			t.Errorf("%s was not created", p)
		}
	}
	if got := names(t, f.paths.Inbox); !slices.Equal(got, []string{"processed"}) {
		t.Errorf("inbox holds %v", got)
	}
	if f.load(older).SequenceNumber != 3 || f.load(newer).SequenceNumber != 3 {
		t.Error("a session did not move on by its two replies")
	}
}

// TestProcessQueueBatchError: a session that cannot take its reply does
// not keep the other sessions' replies from being applied; its error is
// returned with the others'.
func TestProcessQueueBatchError(t *testing.T) {
	f := newFixture(t)
	done := f.create("finished")
	f.apply(done, "r1.txt", "[DONE]\nDone.\n[/DONE]\n")
	open := f.create("open")
	f.save(done+"_late.txt", "[CREATE_FILE path=\"late.txt\"]\nx\n[/CREATE_FILE]\n")
	f.save(open+"_reply.txt", "[CREATE_FILE path=\"open.txt\"]\nx\n[/CREATE_FILE]\n")
	err := f.r.ProcessQueue(context.Background(), inbox.Queue{Dir: f.paths.Inbox}, "courier process")
	var batch *runner.BatchError
	if !errors.As(err, &batch) || len(batch.Errs) != 1 {
		t.Fatalf("error %v, want one session's error", err)
	}
	var complete *runner.CompleteError
	if !errors.As(batch.Errs[0], &complete) || complete.Session != done {
		t.Errorf("error %v, want %s complete", batch.Errs[0], done)
	}
	if !f.existsWS("open.txt") || f.load(open).SequenceNumber != 2 || !exists(f.processed(open+"_reply.txt")) {
		t.Error("the other session's reply was not applied")
	}
	if f.existsWS("late.txt") || !f.inInbox(done+"_late.txt") {
		t.Error("the reply to the complete session was carried out or moved")
	}
}

// TestProcessQueueOutdated: an outdated reply is moved into rejected/,
// runs nothing, and the batch says a reply was not applied.
func TestProcessQueueOutdated(t *testing.T) {
	f := newFixture(t)
	id := f.create("task")
	f.apply(id, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\na\n[/CREATE_FILE]\n")
	f.save("old.txt", "Session: "+id+"\nSequence: 1\n[CREATE_FILE path=\"old.txt\"]\nx\n[/CREATE_FILE]\n")
	err := f.r.ProcessQueue(context.Background(), inbox.Queue{Dir: f.paths.Inbox}, "courier process")
	var batch *runner.BatchError
	if !errors.As(err, &batch) || len(batch.Errs) != 1 {
		t.Fatalf("error %v, want one session's error", err)
	}
	var unapplied *runner.UnappliedError
	if !errors.As(batch.Errs[0], &unapplied) || unapplied.Count != 1 {
		t.Errorf("error %v, want one reply not applied", batch.Errs[0])
	}
	if f.existsWS("old.txt") || !exists(f.rejected("old.txt")) || f.load(id).SequenceNumber != 2 {
		t.Error("the outdated reply was carried out or not moved into rejected/")
	}
}

// TestProcessQueueRecovers: 'courier process' first finishes the turns a
// crash left unfinished, then applies what waits; a question stops it at
// once, leaving the later replies for after the decision.
func TestProcessQueueRecovers(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	crashed := f.create("crashed")
	crashBeforeCommit(f, crashed, "crashed.txt", workReply, false)
	later := f.create("later")
	waiting := f.create("waiting")
	f.asking(waiting)
	f.save(later+"_reply.txt", "[CREATE_FILE path=\"later.txt\"]\nx\n[/CREATE_FILE]\n")

	err := f.r.ProcessQueue(context.Background(), inbox.Queue{Dir: f.paths.Inbox}, "courier process")
	var w *runner.WaitingError
	if !errors.As(err, &w) || w.Session != waiting {
		t.Fatalf("error %v, want %s waiting", err, waiting)
	}
	if st := f.load(crashed); st.SequenceNumber != 2 || lineCount(f.wsPath("runs.txt")) != 1 || !exists(f.processed("crashed.txt")) {
		t.Errorf("the crashed turn was not finished once: sequence %d", st.SequenceNumber)
	}
	f.checkWaiting(waiting)
	if f.existsWS("later.txt") || !f.inInbox(later+"_reply.txt") {
		t.Error("a reply after the question was applied")
	}
}
