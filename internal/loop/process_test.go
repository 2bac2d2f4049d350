package loop_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/loop"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/session"
)

const workReply = `I will create the file and run the counter.
[CREATE_FILE path="hello.txt"]
hello
[/CREATE_FILE]
[RUN_COMMAND]
echo ran >> runs.txt
[/RUN_COMMAND]
`

// TestProcessCommits checks the state after a reply is processed: the next
// outbox exists with the results, the state moved on, the reply left the
// inbox.
func TestProcessCommits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, loop.Options{})
	st := f.newSession("greet")
	out := f.process(st, "reply.txt", workReply)

	next := f.l.OutboxPath(st.SessionID, 2)
	if out.Outbox != next {
		t.Errorf("outbox %q, want %q", out.Outbox, next)
	}
	text := f.outbox(st, 2)
	for _, want := range []string{
		"Session: " + st.SessionID + "\nSequence: 2\nTask: greet\n",
		"  hello.txt (6 bytes)\n",
		"\n## Previous Command Results\n[OK] CREATE_FILE: Created 'hello.txt' (1 line)\n[OK] RUN_COMMAND: Ran 'echo ran >> runs.txt' (exit code 0)\n  Output: (no output)\n",
		"\n=== PROMPT ===\n" + protocol.Continuation + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("outbox 2 lacks %q", want)
		}
	}
	if got := names(t, f.paths.Outbox); len(got) != 2 {
		t.Errorf("outbox folder holds %v", got)
	}

	saved := f.load(st)
	if saved.SequenceNumber != 2 || st.SequenceNumber != 2 || out.State.SequenceNumber != 2 {
		t.Errorf("sequence: saved %d, state %d, outcome %d; want 2", saved.SequenceNumber, st.SequenceNumber, out.State.SequenceNumber)
	}
	if len(saved.LastResults) != 2 || !saved.LastResults[0].Success() || !saved.LastResults[1].Success() {
		t.Errorf("saved results %+v", saved.LastResults)
	}
	if saved.Pending != nil || saved.IsComplete || saved.UndoTop != 1 {
		t.Errorf("saved state %+v", saved)
	}
	if replies := f.applied(st); len(replies) != 1 || replies[0].Sequence != 1 || replies[0].File != "reply.txt" {
		t.Errorf("applied replies %+v", replies)
	}

	moved := filepath.Join(f.paths.Inbox, "processed", "reply.txt")
	if out.MovedTo != moved || !exists(moved) || exists(filepath.Join(f.paths.Inbox, "reply.txt")) {
		t.Errorf("reply moved to %q; in processed: %v", out.MovedTo, exists(moved))
	}
	if f.readWS("hello.txt") != "hello\n" || lineCount(f.wsPath("runs.txt")) != 1 {
		t.Error("the reply's commands were not carried out once")
	}
	if len(out.Engine.Results) != 2 {
		t.Errorf("engine results:%v", out.Engine.Results)
	}
}

func TestProcessDuplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, loop.Options{})
	st := f.newSession("greet")
	f.process(st, "reply.txt", workReply)
	cases := []struct {
		file, text, movedTo string
	}{
		{"again.txt", strings.ReplaceAll(workReply, "\n", "\r\n"), "again.txt"},
		{"reply.txt", "\ufeff" + workReply, "reply.2.txt"},
		{"reply.txt", workReply, "reply.3.txt"},
	}
	for _, tc := range cases {
		_, err := f.tryProcess(st, tc.file, tc.text, engine.Options{})
		var refused *loop.RefusedError
		if !errors.As(err, &refused) || !refused.Duplicate {
			t.Fatalf("%s: error %v, want a duplicate refusal", tc.file, err)
		}
		want := filepath.Join(f.paths.Inbox, "processed", tc.movedTo)
		if refused.MovedTo != want || !exists(want) || exists(filepath.Join(f.paths.Inbox, tc.file)) {
			t.Errorf("%s: moved to %q, want %q", tc.file, refused.MovedTo, want)
		}
		if !strings.Contains(err.Error(), "was already applied as the answer to request 1 of session "+st.SessionID) {
			t.Errorf("message %q", err)
		}
	}
	if n := lineCount(f.wsPath("runs.txt")); n != 1 {
		t.Errorf("the reply ran %d times", n)
	}
	if saved, replies := f.load(st), f.applied(st); saved.SequenceNumber != 2 || len(replies) != 1 {
		t.Errorf("state after duplicates: sequence %d, %d replies", saved.SequenceNumber, len(replies))
	}
	if got := names(t, f.paths.Outbox); len(got) != 2 {
		t.Errorf("outbox folder holds %v", got)
	}
}

func TestProcessStale(t *testing.T) {
	t.Parallel()
	f := newFixture(t, loop.Options{})
	st := f.newSession("greet")
	f.process(st, "first.txt", "Sequence: 1\n"+workReply)
	cases := []struct {
		file, text, message string
	}{
		{"old.txt", "Sequence: 1\n[CREATE_FILE path=\"stale.txt\"]\nx\n[/CREATE_FILE]\n",
			"answers request 1 of session " + st.SessionID + ", an outdated request: the current request is 2"},
		{"future.txt", "Session: " + st.SessionID + "\nSequence: 7\n[CREATE_FILE path=\"stale.txt\"]\nx\n[/CREATE_FILE]\n",
			"answers request 7 of session " + st.SessionID + ", a request that does not exist yet: the current request is 2"},
	}
	for _, tc := range cases {
		_, err := f.tryProcess(st, tc.file, tc.text, engine.Options{})
		var refused *loop.RefusedError
		if !errors.As(err, &refused) || refused.Duplicate {
			t.Fatalf("%s: error %v, want a stale refusal", tc.file, err)
		}
		if !strings.Contains(err.Error(), tc.message) || !strings.Contains(err.Error(), "nothing was run") {
			t.Errorf("%s: message %q\nwant %q", tc.file, err, tc.message)
		}
		want := filepath.Join(f.paths.Inbox, "rejected", tc.file)
		if refused.MovedTo != want || !exists(want) {
			t.Errorf("%s: moved to %q, want %q", tc.file, refused.MovedTo, want)
		}
	}
	if f.existsWS("stale.txt") {
		t.Error("a stale reply was carried out")
	}
	// A reply that does not say which request it answers is taken as the
	// answer to the current one.
	out := f.process(st, "plain.txt", "[CREATE_FILE path=\"plain.txt\"]\nx\n[/CREATE_FILE]\n")
	if out.State.SequenceNumber != 3 || !f.existsWS("plain.txt") {
		t.Errorf("a reply without a sequence: state %d", out.State.SequenceNumber)
	}
}

func TestProcessDone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, loop.Options{})
	st := f.newSession("greet")
	out := f.process(st, "reply.txt", "[CREATE_FILE path=\"hello.txt\"]\nhello\n[/CREATE_FILE]\n[DONE]\nCreated hello.txt.\n[/DONE]\n")
	if out.Outbox != "" || exists(f.l.OutboxPath(st.SessionID, 2)) {
		t.Errorf("a completed session got a next outbox %q", out.Outbox)
	}
	saved := f.load(st)
	if !saved.IsComplete || saved.Summary != "Created hello.txt." || saved.SequenceNumber != 1 || saved.Status() != "complete" {
		t.Errorf("saved state: complete %v, summary %q, sequence %d", saved.IsComplete, saved.Summary, saved.SequenceNumber)
	}
	if out.MovedTo == "" || f.readWS("hello.txt") != "hello\n" {
		t.Errorf("moved to %q", out.MovedTo)
	}
	// Nothing more is applied to a complete session.
	p := f.inbox("more.txt", "[CREATE_FILE path=\"more.txt\"]\nx\n[/CREATE_FILE]\n")
	_, err := f.l.Process(context.Background(), st, f.readReply(p), engine.Options{})
	if err == nil || !strings.Contains(err.Error(), "session "+st.SessionID+" is complete") {
		t.Errorf("error %v, want the session complete", err)
	}
	if f.existsWS("more.txt") || !exists(p) {
		t.Error("a reply to a complete session was carried out or moved")
	}
}

func TestProcessNoCommands(t *testing.T) {
	t.Parallel()
	f := newFixture(t, loop.Options{})
	st := f.newSession("greet")
	f.process(st, "chat.txt", "Sure! I will get right on it. What language should I use?\n")
	text := f.outbox(st, 2)
	if !strings.Contains(text, "## Previous Command Results\n"+protocol.NoCommandsNotice+"\n") {
		t.Errorf("outbox 2 lacks the notice:\n%s", text[strings.Index(text, "=== CONTEXT ==="):])
	}
	f.process(st, "reply.txt", workReply)
	if text := f.outbox(st, 3); strings.Contains(text, protocol.NoCommandsNotice) {
		t.Error("the notice stayed for the next request")
	}
}

func TestProcessReadRequests(t *testing.T) {
	t.Parallel()
	f := newFixture(t, loop.Options{ReadLines: 4})
	f.writeWS("a.txt", "alpha\nbeta\n")
	f.writeWS("long.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	f.writeWS("src/x.go", "package x\n")
	f.writeWS("src/y.go", "package y\n")
	f.writeWS("bin.dat", "\x00\x01\x02\x03")
	st := f.newSession("read")
	f.process(st, "reply.txt", `[READ_FILE path="a.txt"]
[READ_FILE path="long.txt" lines="3-4"]
[READ_FILE path="long.txt"]
[READ_FILE path="src/*.go"]
[READ_FILE path="bin.dat"]
[READ_FILE path="missing.txt"]
`)
	text := f.outbox(st, 2)
	requested := text[strings.Index(text, "## Requested File Contents"):]
	want := `## Requested File Contents
--- a.txt ---
   1 | alpha
   2 | beta
--- end a.txt ---
--- long.txt ---
   3 | 3
   4 | 4
--- end long.txt ---
--- long.txt ---
   1 | 1
   2 | 2
   3 | 3
   4 | 4
[... 6 more lines; request them with [READ_FILE path="long.txt" lines="5-8"] ...]
--- end long.txt ---
--- src/x.go ---
   1 | package x
--- end src/x.go ---
--- src/y.go ---
   1 | package y
--- end src/y.go ---
--- bin.dat ---
(binary file, 4 bytes; not shown)
--- end bin.dat ---

=== PROMPT ===
`
	if !strings.HasPrefix(requested, want) {
		t.Errorf("requested files:\n%s\nwant\n%s", requested, want)
	}
	if !strings.Contains(text, "[FAILED] READ_FILE: File 'missing.txt' not found\n") {
		t.Error("the failed READ_FILE is not reported")
	}
	// The requests are saved as the protocol describes: a plain path, or
	// an object with the range.
	saved := readFile(t, f.l.Store.Path(st.SessionID))
	compact := strings.Join(strings.Fields(saved), "")
	if !strings.Contains(compact, `"readFileRequests":["a.txt",{"path":"long.txt","startLine":3,"endLine":4},"long.txt","src/*.go","bin.dat"]`) {
		t.Errorf("saved read requests:\n%s", saved)
	}
	// The next outbox shows nothing again unless asked.
	f.process(st, "next.txt", "[MESSAGE]\nread them\n[/MESSAGE]\n")
	if strings.Contains(f.outbox(st, 3), "## Requested File Contents") {
		t.Error("files requested once are shown again")
	}
}

// TestProcessWaitsForApproval: a reply stopped at an approval question is
// not committed; another reply is refused until it is finished, and
// Decide plus Recover finish it.
func TestProcessWaitsForApproval(t *testing.T) {
	t.Parallel()
	pol, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.Options{Policy: pol}
	f := newFixture(t, loop.Options{})
	f.writeWS("junk/file", "x")
	st := f.newSession("clean up")
	out, err := f.tryProcess(st, "reply.txt", "[RUN_COMMAND]\nrm -rf junk\n[/RUN_COMMAND]\n[CREATE_FILE path=\"after.txt\"]\nx\n[/CREATE_FILE]\n", opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Engine.Waiting == nil || out.Outbox != "" || out.MovedTo != "" {
		t.Fatalf("waiting %+v, outbox %q, moved to %q", out.Engine.Waiting, out.Outbox, out.MovedTo)
	}
	saved := f.load(st)
	if saved.Pending == nil || saved.Pending.Command != "rm -rf junk" || saved.SequenceNumber != 1 || saved.Status() != "awaiting approval" {
		t.Errorf("saved state: pending %+v, sequence %d", saved.Pending, saved.SequenceNumber)
	}
	if file, ok := f.l.Unfinished(st); !ok || file != "reply.txt" {
		t.Errorf("Unfinished: %q, %v", file, ok)
	}
	if !exists(filepath.Join(f.paths.Inbox, "reply.txt")) {
		t.Error("the waiting reply left the inbox")
	}

	// Another reply meanwhile is refused and left alone.
	_, err = f.tryProcess(st, "other.txt", "[CREATE_FILE path=\"other.txt\"]\nx\n[/CREATE_FILE]\n", opts)
	if err == nil || !strings.Contains(err.Error(), "session "+st.SessionID+" is still applying reply.txt") {
		t.Errorf("error %v, want the session busy with reply.txt", err)
	}
	if f.existsWS("other.txt") || !exists(filepath.Join(f.paths.Inbox, "other.txt")) {
		t.Error("the other reply was carried out or moved")
	}

	if _, err := f.l.Decide(st, true, false, ""); err != nil {
		t.Fatal(err)
	}
	res, ok, err := f.l.Recover(context.Background(), st, opts)
	if err != nil || !ok {
		t.Fatalf("recover: %v, %v", ok, err)
	}
	if f.existsWS("junk/file") || !f.existsWS("after.txt") || res.Outbox != f.l.OutboxPath(st.SessionID, 2) {
		t.Errorf("after approval: outbox %q%v", res.Outbox, res.Engine.Results)
	}
	if saved := f.load(st); saved.Pending != nil || saved.SequenceNumber != 2 {
		t.Errorf("saved state: pending %+v, sequence %d", saved.Pending, saved.SequenceNumber)
	}
	if !exists(filepath.Join(f.paths.Inbox, "processed", "reply.txt")) {
		t.Error("the finished reply was not moved")
	}
	if _, ok := f.l.Unfinished(st); ok {
		t.Error("still unfinished")
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name               string
		approved, all      bool
		reason             string
		wantApproved, want bool
	}{
		{"approve", true, false, "", true, false},
		{"approve all", true, true, "", true, true},
		{"deny", false, false, "not now", false, false},
		{"deny cannot cover all", false, true, "no", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, loop.Options{})
			st := f.newSession("task")
			if _, err := f.l.Decide(st, tc.approved, tc.all, tc.reason); err == nil || !strings.Contains(err.Error(), "is not waiting for an approval") {
				t.Errorf("decide without a question: %v", err)
			}
			if seqs, _ := f.l.Store.Turns(st.SessionID); len(seqs) != 0 {
				t.Errorf("a decision without a question left turns %v", seqs)
			}
			st.Pending = &session.Pending{Sequence: 1, Index: 2, Command: "rm -rf x"}
			p, err := f.l.Decide(st, tc.approved, tc.all, tc.reason)
			if err != nil || p != st.Pending {
				t.Fatalf("decide: %v, %v", p, err)
			}
			turn, err := f.l.Store.ReadTurn(st.SessionID, 1)
			if err != nil {
				t.Fatal(err)
			}
			want := session.Record{Kind: session.Decision, Index: 2, Approved: tc.wantApproved, All: tc.want, Reason: tc.reason}
			if len(turn.Records) != 1 {
				t.Fatalf("journal %+v", turn.Records)
			}
			got := turn.Records[0]
			got.At = want.At
			if got.Kind != want.Kind || got.Index != want.Index || got.Approved != want.Approved || got.All != want.All || got.Reason != want.Reason {
				t.Errorf("recorded %+v, want %+v", got, want)
			}
		})
	}
}
