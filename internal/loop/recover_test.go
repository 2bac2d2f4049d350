package loop_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/loop"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// crashBeforeCommit does what Process does up to a crash between writing
// the next outbox and saving the state: the reply is applied and journaled
// in full and the next outbox written, and the saved state still waits
// for the reply. A temporary file of a second outbox write is left too.
func crashBeforeCommit(t *testing.T, f *fixture, st *session.State, replyPath string) {
	t.Helper()
	r := f.readReply(replyPath)
	ws, err := workspace.Open(st.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	running := *st
	out, err := engine.New(ws, f.l.Store, engine.Options{}).Apply(context.Background(), &running,
		engine.Input{Hash: r.Hash, File: filepath.Base(r.Path), Commands: r.Parsed.Commands})
	if err != nil {
		t.Fatal(err)
	}
	next := running
	next.SequenceNumber++
	next.LastResults = out.Results
	if _, err := f.l.WriteOutbox(&next); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.paths.Outbox, ".courier-tmp-"+st.SessionID+"_seq0002.txt-123456"), "=== HEADER ===\nSess")
}

// referenceOutbox is the second outbox of an uninterrupted session that
// gets the same reply in the same workspace, with id in place of its own
// session id.
func referenceOutbox(t *testing.T, files map[string]string, reply, id string) string {
	t.Helper()
	f := newFixture(t, loop.Options{})
	for p, c := range files {
		f.writeWS(p, c)
	}
	st := f.newSession("count")
	f.process(st, "reply.txt", reply)
	return strings.ReplaceAll(f.outbox(st, 2), st.SessionID, id)
}

// TestRecoverAfterCrash: Recover commits a turn that was applied but not
// committed. It writes the outbox once more, exactly as an uninterrupted
// run would have, runs nothing again, saves the state, and moves the reply
// only if the inbox still holds that very reply.
func TestRecoverAfterCrash(t *testing.T) {
	t.Parallel()
	files := map[string]string{"notes.txt": "notes\n"}
	cases := []struct {
		name string
		// inbox is what inbox/reply.txt holds at recovery (gone: nothing).
		inbox string
		moved bool
	}{
		{name: "reply still in the inbox", inbox: workReply, moved: true},
		{name: "reply saved again with CRLF", inbox: strings.ReplaceAll(workReply, "\n", "\r\n"), moved: true},
		{name: "another file of the same name", inbox: "[MESSAGE]\nsomething else\n[/MESSAGE]\n"},
		{name: "reply gone", inbox: "\x00gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, loop.Options{})
			for p, c := range files {
				f.writeWS(p, c)
			}
			st := f.newSession("count")
			replyPath := f.inbox("reply.txt", workReply)
			crashBeforeCommit(t, f, st, replyPath)
			switch tc.inbox {
			case workReply:
			case "\x00gone":
				if err := os.Remove(replyPath); err != nil {
					t.Fatal(err)
				}
			default:
				writeFile(t, replyPath, tc.inbox)
			}

			// courier starts again.
			st, err := f.l.Store.Load(st.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if st.SequenceNumber != 1 {
				t.Fatalf("the crash left sequence %d saved", st.SequenceNumber)
			}
			if file, ok := f.l.Unfinished(st); !ok || file != "reply.txt" {
				t.Errorf("Unfinished: %q, %v", file, ok)
			}
			out, ok, err := f.l.Recover(context.Background(), st, engine.Options{})
			if err != nil || !ok {
				t.Fatalf("recover: %v, %v", ok, err)
			}
			if !out.Engine.Resumed || out.Outbox != f.l.OutboxPath(st.SessionID, 2) {
				t.Errorf("resumed %v, outbox %q", out.Engine.Resumed, out.Outbox)
			}
			if got, want := f.outbox(st, 2), referenceOutbox(t, files, workReply, st.SessionID); got != want {
				t.Errorf("outbox 2 after recovery:\n%s\nwant\n%s", got, want)
			}
			if got := names(t, f.paths.Outbox); len(got) != 2 {
				t.Errorf("outbox folder holds %v", got)
			}
			if n := lineCount(f.wsPath("runs.txt")); n != 1 {
				t.Errorf("the command ran %d times", n)
			}
			saved, replies := f.load(st), f.applied(st)
			if saved.SequenceNumber != 2 || len(replies) != 1 || replies[0].File != "reply.txt" {
				t.Errorf("saved state: sequence %d, replies %+v", saved.SequenceNumber, replies)
			}

			processed := filepath.Join(f.paths.Inbox, "processed", "reply.txt")
			switch {
			case tc.moved && (out.MovedTo != processed || exists(replyPath)):
				t.Errorf("the reply was not moved: %q", out.MovedTo)
			case !tc.moved && (out.MovedTo != "" || exists(processed)):
				t.Errorf("moved %q to %q", tc.inbox, out.MovedTo)
			case !tc.moved && tc.inbox != "\x00gone" && readFile(t, replyPath) != tc.inbox:
				t.Error("the unrelated file in the inbox was changed")
			}

			// Nothing is left to recover.
			if _, ok, err := f.l.Recover(context.Background(), st, engine.Options{}); ok || err != nil {
				t.Errorf("second recover: %v, %v", ok, err)
			}
			if got := names(t, f.paths.Outbox); len(got) != 2 {
				t.Errorf("outbox folder holds %v after a second recover", got)
			}
		})
	}
}

func TestRecoverNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, loop.Options{})
	st := f.newSession("count")
	out, ok, err := f.l.Recover(context.Background(), st, engine.Options{})
	if ok || err != nil || out.Outbox != "" {
		t.Errorf("recover without a turn: %+v, %v, %v", out, ok, err)
	}
	// Another session's temporary files are not touched: it may be
	// writing them right now.
	other := filepath.Join(f.paths.Outbox, ".courier-tmp-0badcafe_seq0003.txt-99")
	writeFile(t, other, "x")
	if _, _, err := f.l.Recover(context.Background(), st, engine.Options{}); err != nil {
		t.Fatal(err)
	}
	if !exists(other) {
		t.Error("recovery removed another session's temporary file")
	}
}

// TestEnsureOutbox: a missing current outbox is written again, an
// existing one left alone.
func TestEnsureOutbox(t *testing.T) {
	t.Parallel()
	f := newFixture(t, loop.Options{})
	st := f.newSession("count")
	first := f.outbox(st, 1)
	if p, wrote, err := f.l.EnsureOutbox(st); err != nil || wrote || p != f.l.OutboxPath(st.SessionID, 1) {
		t.Errorf("existing outbox: %q, %v, %v", p, wrote, err)
	}
	if err := os.Remove(f.l.OutboxPath(st.SessionID, 1)); err != nil {
		t.Fatal(err)
	}
	if _, wrote, err := f.l.EnsureOutbox(st); err != nil || !wrote {
		t.Errorf("missing outbox: %v, %v", wrote, err)
	}
	if f.outbox(st, 1) != first {
		t.Error("the rewritten outbox differs")
	}
}
