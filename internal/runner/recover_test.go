package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

// crashBeforeCommit applies a reply saved as inbox/name to session id and
// then puts things back as they were when courier died after writing the
// next request and before saving the state: the turn is journaled in full,
// its commands carried out, request 2 written (or, with !written, only a
// temporary file of it), the saved state still waits for the reply, and
// the reply is still in the inbox.
func crashBeforeCommit(f *fixture, id, name, text string, written bool) {
	f.t.Helper()
	before := f.snapshot(id)
	f.apply(id, name, text)
	f.restore(id, before)
	if err := os.Rename(f.processed(name), filepath.Join(f.paths.Inbox, name)); err != nil {
		f.t.Fatal(err)
	}
	if !written {
		if err := os.Remove(f.requestPath(id, 2)); err != nil {
			f.t.Fatal(err)
		}
		writeFile(f.t, filepath.Join(f.paths.Outbox, ".courier-tmp-"+id+"_seq0002.txt-123456"), "=== HEADER ===\nSess")
	}
	writeFile(f.t, filepath.Join(f.paths.Sessions, ".courier-tmp-"+id+".json-654321"), "{\"sessionId\":")
	// The workspace's index was being saved, too.
	folder := filepath.Join(f.paths.Sessions, id)
	if _, err := os.Stat(filepath.Join(folder, "index")); err != nil {
		f.t.Fatalf("no index after a turn: %v", err)
	}
	writeFile(f.t, filepath.Join(folder, ".courier-tmp-index-777777"), "half an index")
}

// tempsUnder lists the temporary files anywhere below dir.
func tempsUnder(t *testing.T, dir string) []string {
	t.Helper()
	var temps []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".courier-tmp-") {
			temps = append(temps, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return temps
}

// referenceRequest is the second request of an uninterrupted session that
// gets the same reply in the same workspace, with id in place of its own
// session id.
func referenceRequest(t *testing.T, files map[string]string, text, id string) string {
	t.Helper()
	f := newFixture(t)
	for p, c := range files {
		f.writeWS(p, c)
	}
	ref := f.create("count")
	f.apply(ref, "reply.txt", text)
	return strings.ReplaceAll(f.request(ref, 2), ref, id)
}

// TestRecoverAfterCrash: the next run commits a turn that was applied but
// not committed. It writes the request once more, exactly as an
// uninterrupted run would have, runs nothing again, saves the state,
// removes the session's temporary files, and moves the reply only if the
// inbox still holds that very reply.
func TestRecoverAfterCrash(t *testing.T) {
	files := map[string]string{"notes.txt": "notes\n"}
	const gone = "\x00gone"
	cases := []struct {
		name string
		// inbox is what inbox/reply.txt holds at recovery.
		inbox   string
		written bool
		moved   bool
	}{
		{name: "reply still in the inbox", inbox: workReply, written: true, moved: true},
		{name: "request not yet written", inbox: workReply, moved: true},
		{name: "reply saved again with CRLF", inbox: strings.ReplaceAll(workReply, "\n", "\r\n"), written: true, moved: true},
		{name: "another file of the same name", inbox: "[MESSAGE]\nsomething else\n[/MESSAGE]\n", written: true},
		{name: "reply gone", inbox: gone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for p, c := range files {
				f.writeWS(p, c)
			}
			id := f.create("count")
			crashBeforeCommit(f, id, "reply.txt", workReply, tc.written)
			replyPath := filepath.Join(f.paths.Inbox, "reply.txt")
			switch tc.inbox {
			case workReply:
			case gone:
				if err := os.Remove(replyPath); err != nil {
					t.Fatal(err)
				}
			default:
				writeFile(t, replyPath, tc.inbox)
			}
			if st := f.load(id); st.SequenceNumber != 1 || len(f.replies(id)) != 0 {
				t.Fatalf("the crash left sequence %d saved", st.SequenceNumber)
			}
			if info, err := f.r.Status(id); err != nil || info.State != runner.StateApplying || info.Unfinished != "reply.txt" {
				t.Errorf("status before recovery: %+v, %v", info, err)
			}

			// courier starts again: 'courier process' recovers the session
			// and takes its waiting replies from the inbox.
			r, rec := f.runner(nil)
			s, err := r.Hold(id, "courier process")
			if err != nil {
				t.Fatal(err)
			}
			err = s.Serve(context.Background(), inbox.Queue{Dir: f.paths.Inbox}.Source(id, false))
			s.Release()
			if err != nil {
				t.Fatal(err)
			}
			resumed := eventsOf[runner.TurnResumed](rec)
			if len(resumed) != 1 || resumed[0] != (runner.TurnResumed{Session: id, Sequence: 1, Reply: "reply.txt"}) {
				t.Errorf("resumed %+v", resumed)
			}
			if n := len(eventsOf[runner.ReplyTaken](rec)); n != 0 {
				t.Errorf("%d replies taken after the recovery", n)
			}
			if got, want := f.request(id, 2), referenceRequest(t, files, workReply, id); got != want {
				t.Errorf("request 2 after recovery:\n%s\nwant\n%s", got, want)
			}
			if got := names(t, f.paths.Outbox); len(got) != 2 {
				t.Errorf("outbox folder holds %v", got)
			}
			if got := tempsUnder(t, f.paths.Sessions); len(got) > 0 {
				t.Errorf("temporary files left: %v", got)
			}
			if n := lineCount(f.wsPath("runs.txt")); n != 1 {
				t.Errorf("the command ran %d times", n)
			}
			saved := f.load(id)
			if saved.SequenceNumber != 2 || len(f.replies(id)) != 1 || f.replies(id)[0].File != "reply.txt" {
				t.Errorf("saved state: sequence %d, replies %+v", saved.SequenceNumber, f.replies(id))
			}

			processed := f.processed("reply.txt")
			switch {
			case tc.moved && (!exists(processed) || exists(replyPath)):
				t.Error("the reply was not moved into processed/")
			case !tc.moved && exists(processed):
				t.Errorf("moved %q into processed/", tc.inbox)
			case !tc.moved && tc.inbox != gone && readFile(t, replyPath) != tc.inbox:
				t.Error("the unrelated file in the inbox was changed")
			}

			// Nothing is left to recover.
			s, err = r.Hold(id, "courier process")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			if ok, err := s.Recover(context.Background(), nil); ok || err != nil {
				t.Errorf("second recover: %v, %v", ok, err)
			}
			if got := names(t, f.paths.Outbox); len(got) != 2 {
				t.Errorf("outbox folder holds %v after a second recover", got)
			}
		})
	}
}

// TestRecoverMidTurn: a crash between two commands; the next run carries
// out the commands without a result, once, and the settle callback hears
// of the reply.
func TestRecoverMidTurn(t *testing.T) {
	f := newFixture(t)
	id := f.create("count")
	crashBeforeCommit(f, id, "reply.txt", workReply, false)
	// Died right after the CREATE_FILE's result, before the command ran.
	if got := f.kinds(id, 1); got != "begin apply/0 result/0 start/1 result/1" {
		t.Fatalf("journal %q", got)
	}
	f.crashAfter(id, 1, 3)
	if err := os.Remove(f.wsPath("runs.txt")); err != nil {
		t.Fatal(err)
	}
	r, _ := f.runner(nil)
	s, err := r.Hold(id, "courier watch")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var settled []string
	ok, err := s.Recover(context.Background(), func(name, hash string) { settled = append(settled, name) })
	if !ok || err != nil {
		t.Fatalf("recover: %v, %v", ok, err)
	}
	if n := lineCount(f.wsPath("runs.txt")); n != 1 || f.readWS("hello.txt") != "hello\n" {
		t.Errorf("the command ran %d times", n)
	}
	if len(settled) != 1 || settled[0] != "reply.txt" {
		t.Errorf("settled %v", settled)
	}
	if !strings.Contains(f.request(id, 2), "[OK] RUN_COMMAND: Ran 'echo ran >> runs.txt' (exit code 0)\n") {
		t.Error("request 2 lacks the command's result")
	}
	if st := f.load(id); st.SequenceNumber != 2 {
		t.Errorf("sequence %d", st.SequenceNumber)
	}
}

func TestRecoverNothing(t *testing.T) {
	f := newFixture(t)
	id := f.create("count")
	// Another session's temporary files are not touched: it may be
	// writing them right now. The session's own are a crash's.
	other := filepath.Join(f.paths.Outbox, ".courier-tmp-0badcafe_seq0003.txt-99")
	writeFile(t, other, "x")
	own := filepath.Join(f.paths.Outbox, ".courier-tmp-"+id+"_seq0002.txt-99")
	writeFile(t, own, "x")
	s, err := f.r.Hold(id, "courier watch")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	ok, err := s.Recover(context.Background(), func(string, string) { t.Error("settled a reply without a turn") })
	if ok || err != nil {
		t.Errorf("recover without a turn: %v, %v", ok, err)
	}
	if !exists(other) {
		t.Error("recovery removed another session's temporary file")
	}
	if exists(own) {
		t.Error("recovery left the session's own temporary file")
	}
	if got := names(t, f.paths.Outbox); len(got) != 2 {
		t.Errorf("outbox holds %v", got)
	}
}

// TestCommitOrder: the next request is written before the state is saved,
// so a turn whose request cannot be written is not committed: the session
// still answers the same request, and the next run finishes the turn once
// the request can be written.
func TestCommitOrder(t *testing.T) {
	f := newFixture(t)
	id := f.create("count")
	// A folder where request 2 goes makes writing it fail.
	if err := os.Mkdir(f.requestPath(id, 2), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.tryApply(f.r, id, "reply.txt", workReply); err == nil || !strings.Contains(err.Error(), "write request") {
		t.Fatalf("error %v, want the request write to fail", err)
	}
	st := f.load(id)
	if st.SequenceNumber != 1 || len(f.replies(id)) != 0 || !f.inInbox("reply.txt") {
		t.Errorf("a turn without its request was committed: sequence %d, replies %+v", st.SequenceNumber, f.replies(id))
	}
	if info, _ := f.r.Status(id); info.State != runner.StateApplying {
		t.Errorf("status %s, want %s", info.State, runner.StateApplying)
	}
	if n := len(eventsOf[runner.TurnEnded](f.rec)); n != 0 {
		t.Errorf("%d turns reported ended", n)
	}

	if err := os.Remove(f.requestPath(id, 2)); err != nil {
		t.Fatal(err)
	}
	if err := f.r.ProcessQueue(context.Background(), inbox.Queue{Dir: f.paths.Inbox}, "courier process"); err != nil {
		t.Fatal(err)
	}
	if st := f.load(id); st.SequenceNumber != 2 || len(f.replies(id)) != 1 || lineCount(f.wsPath("runs.txt")) != 1 {
		t.Errorf("after recovery: sequence %d, ran %d times", st.SequenceNumber, lineCount(f.wsPath("runs.txt")))
	}
	if !strings.Contains(f.request(id, 2), "[OK] RUN_COMMAND: Ran 'echo ran >> runs.txt' (exit code 0)") || !exists(f.processed("reply.txt")) {
		t.Error("the recovered turn's request or settlement is wrong")
	}
}
