package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

const workReply = `I will create the file and run the counter.
[CREATE_FILE path="hello.txt"]
hello
[/CREATE_FILE]
[RUN_COMMAND]
echo ran >> runs.txt
[/RUN_COMMAND]
`

// TestApplyCommits checks a turn from the person's side: the next request
// exists with the results, the state moved on, the reply left the inbox
// for processed/, and the reporter heard each step in order.
func TestApplyCommits(t *testing.T) {
	f := newFixture(t)
	id := f.create("greet")
	f.apply(id, "reply.txt", workReply)

	text := f.request(id, 2)
	for _, want := range []string{
		"Session: " + id + "\nSequence: 2\nTask: greet\n",
		"  hello.txt (6 bytes)\n",
		"\n## Previous Command Results\n[OK] CREATE_FILE: Created 'hello.txt' (1 line)\n[OK] RUN_COMMAND: Ran 'echo ran >> runs.txt' (exit code 0)\n  Output: (no output)\n",
		"\n=== PROMPT ===\n" + protocol.Continuation + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("request 2 lacks %q", want)
		}
	}
	if got := names(t, f.paths.Outbox); len(got) != 2 {
		t.Errorf("outbox folder holds %v", got)
	}

	saved := f.load(id)
	if saved.SequenceNumber != 2 || len(saved.LastResults) != 2 || !saved.LastResults[0].Success() || !saved.LastResults[1].Success() {
		t.Errorf("saved sequence %d, results %+v", saved.SequenceNumber, saved.LastResults)
	}
	if len(f.replies(id)) != 1 || f.replies(id)[0].Sequence != 1 || f.replies(id)[0].File != "reply.txt" || saved.Pending != nil || saved.IsComplete {
		t.Errorf("saved state %+v", saved)
	}
	if !exists(f.processed("reply.txt")) || f.inInbox("reply.txt") {
		t.Error("the applied reply was not moved into inbox/processed/")
	}
	if f.readWS("hello.txt") != "hello\n" || lineCount(f.wsPath("runs.txt")) != 1 {
		t.Error("the reply's commands were not carried out once")
	}

	events := f.rec.all()
	taken := position(events, func(e any) bool {
		v, ok := e.(runner.ReplyTaken)
		return ok && v == runner.ReplyTaken{Session: id, Sequence: 1, Name: "reply.txt"}
	})
	started := position(events, func(e any) bool {
		v, ok := e.(runner.CommandStarted)
		return ok && v.Index == 1 && v.Command.Command == "echo ran >> runs.txt"
	})
	ended := position(events, func(e any) bool {
		v, ok := e.(runner.TurnEnded)
		return ok && v.Session == id && v.Sequence == 1 && len(v.Commands) == 2 && len(v.Results) == 2 && !v.Complete
	})
	written := position(events, func(e any) bool {
		v, ok := e.(runner.RequestWritten)
		return ok && v.Sequence == 2 && v.Path == f.requestPath(id, 2) && v.Text == text && !v.Rewritten
	})
	if taken < 0 || started < taken || ended < started || written < ended {
		t.Errorf("events out of order or missing (taken %d, started %d, ended %d, written %d): %s", taken, started, ended, written, eventTypes(events))
	}
	if n := len(eventsOf[runner.CommandFinished](f.rec)); n != 2 {
		t.Errorf("%d commands reported finished, want 2", n)
	}
}

func utf16LE(s string) string {
	out := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return string(out)
}

// TestApplyDuplicate: a reply applied before is recognised however an
// editor saved it again, is not run again, and goes to processed/ without
// replacing the copy there.
func TestApplyDuplicate(t *testing.T) {
	f := newFixture(t)
	id := f.create("greet")
	f.apply(id, "reply.txt", workReply)
	cases := []struct {
		file, text, movedTo string
	}{
		{"again.txt", strings.ReplaceAll(workReply, "\n", "\r\n"), "again.txt"},
		{"reply.txt", "\ufeff" + workReply, "reply.2.txt"},
		{"reply.txt", workReply, "reply.3.txt"},
		{"cr.txt", strings.ReplaceAll(workReply, "\n", "\r"), "cr.txt"},
		{"bom-crlf.md", "\ufeff" + strings.ReplaceAll(workReply, "\n", "\r\n"), "bom-crlf.md"},
		{"utf16.txt", utf16LE(workReply), "utf16.txt"},
	}
	for _, tc := range cases {
		before := len(eventsOf[runner.ReplyRefused](f.rec))
		if err := f.tryApply(f.r, id, tc.file, tc.text); err != nil {
			t.Fatalf("%s: %v; a duplicate is reported, not an error", tc.file, err)
		}
		refusals := eventsOf[runner.ReplyRefused](f.rec)[before:]
		want := f.processed(tc.movedTo)
		if len(refusals) != 1 || !refusals[0].Duplicate || refusals[0].Name != tc.file || refusals[0].MovedTo != want {
			t.Fatalf("%s: refusals %+v, want one duplicate moved to %s", tc.file, refusals, want)
		}
		if !strings.Contains(refusals[0].Reason, "reply "+tc.file+" was already applied as the answer to request 1 of session "+id) ||
			!strings.Contains(refusals[0].Reason, "it was not run again") {
			t.Errorf("%s: reason %q", tc.file, refusals[0].Reason)
		}
		if !exists(want) || f.inInbox(tc.file) {
			t.Errorf("%s: not moved to %s", tc.file, want)
		}
	}
	if readFile(t, f.processed("reply.txt")) != workReply {
		t.Error("the first applied copy in processed/ was replaced")
	}
	if n := lineCount(f.wsPath("runs.txt")); n != 1 {
		t.Errorf("the reply ran %d times", n)
	}
	if saved := f.load(id); saved.SequenceNumber != 2 || len(f.replies(id)) != 1 {
		t.Errorf("state after duplicates: sequence %d, %d replies", saved.SequenceNumber, len(f.replies(id)))
	}
	if got := names(t, f.paths.Outbox); len(got) != 2 {
		t.Errorf("outbox folder holds %v", got)
	}

	// A reply that differs by one letter is another reply.
	f.apply(id, "other.txt", strings.Replace(workReply, "hello\n", "hallo\n", 1))
	if n := lineCount(f.wsPath("runs.txt")); n != 2 || f.readWS("hello.txt") != "hallo\n" {
		t.Errorf("a different reply was not applied: ran %d times", n)
	}
}

// TestApplyDuplicateRefused: a reply applied before, saved again under
// another name, is refused as a duplicate, moved into processed/, and runs
// nothing.
func TestApplyDuplicateRefused(t *testing.T) {
	f := newFixture(t)
	id := f.create("greet")
	f.apply(id, "reply.txt", workReply)
	f.apply(id, "again.txt", workReply)
	refused := eventsOf[runner.ReplyRefused](f.rec)
	if len(refused) != 1 || refused[0].Name != "again.txt" || !refused[0].Duplicate || refused[0].MovedTo != f.processed("again.txt") {
		t.Fatalf("refusals %+v, want again.txt as a duplicate, moved to processed/", refused)
	}
	if n := lineCount(f.wsPath("runs.txt")); n != 1 {
		t.Errorf("the reply ran %d times", n)
	}
}

// TestApplyStale: a reply answering another request than the current one
// is refused, moved into rejected/, and nothing of it runs.
func TestApplyStale(t *testing.T) {
	f := newFixture(t)
	id := f.create("greet")
	f.apply(id, "first.txt", "Sequence: 1\n"+workReply)
	cases := []struct {
		file, text, message string
	}{
		{"old.txt", "Sequence: 1\n[CREATE_FILE path=\"stale.txt\"]\nx\n[/CREATE_FILE]\n",
			"reply old.txt answers request 1 of session " + id + ", an outdated request: the current request is 2 (" + f.requestPath(id, 2) + ")"},
		{"future.txt", "Session: " + id + "\nSequence: 7\n[CREATE_FILE path=\"stale.txt\"]\nx\n[/CREATE_FILE]\n",
			"reply future.txt answers request 7 of session " + id + ", a request that does not exist yet: the current request is 2"},
	}
	for _, tc := range cases {
		before := len(eventsOf[runner.ReplyRefused](f.rec))
		err := f.tryApply(f.r, id, tc.file, tc.text)
		var unapplied *runner.UnappliedError
		if !errors.As(err, &unapplied) || unapplied.Count != 1 {
			t.Fatalf("%s: error %v, want one reply not applied", tc.file, err)
		}
		refusals := eventsOf[runner.ReplyRefused](f.rec)[before:]
		if len(refusals) != 1 || refusals[0].Duplicate {
			t.Fatalf("%s: refusals %+v, want one stale refusal", tc.file, refusals)
		}
		if r := refusals[0].Reason; !strings.Contains(r, tc.message) || !strings.Contains(r, "nothing was run") {
			t.Errorf("%s: reason %q\nwant %q", tc.file, r, tc.message)
		}
		if want := f.rejected(tc.file); refusals[0].MovedTo != want || !exists(want) || f.inInbox(tc.file) {
			t.Errorf("%s: moved to %q, want %q", tc.file, refusals[0].MovedTo, want)
		}
	}
	if f.existsWS("stale.txt") {
		t.Error("a stale reply was carried out")
	}
	if saved := f.load(id); saved.SequenceNumber != 2 || len(f.replies(id)) != 1 {
		t.Errorf("stale replies changed the state: sequence %d, %d replies", saved.SequenceNumber, len(f.replies(id)))
	}
	// A reply that does not say which request it answers is taken as the
	// answer to the current one.
	f.apply(id, "plain.txt", "[CREATE_FILE path=\"plain.txt\"]\nx\n[/CREATE_FILE]\n")
	if saved := f.load(id); saved.SequenceNumber != 3 || !f.existsWS("plain.txt") {
		t.Errorf("a reply without a sequence: state %d", saved.SequenceNumber)
	}
}

func TestApplyDone(t *testing.T) {
	f := newFixture(t)
	id := f.create("greet")
	f.apply(id, "reply.txt", "[CREATE_FILE path=\"hello.txt\"]\nhello\n[/CREATE_FILE]\n[DONE]\nCreated hello.txt.\n[/DONE]\n")
	if exists(f.requestPath(id, 2)) {
		t.Error("a completed session got a next request")
	}
	for _, w := range eventsOf[runner.RequestWritten](f.rec) {
		if w.Sequence != 1 {
			t.Errorf("a request was announced after DONE: %+v", w)
		}
	}
	saved := f.load(id)
	if !saved.IsComplete || saved.Summary != "Created hello.txt." || saved.SequenceNumber != 1 || len(f.replies(id)) != 1 {
		t.Errorf("saved state: complete %v, summary %q, sequence %d", saved.IsComplete, saved.Summary, saved.SequenceNumber)
	}
	ends := eventsOf[runner.TurnEnded](f.rec)
	if len(ends) != 1 || !ends[0].Complete || ends[0].Summary != "Created hello.txt." || ends[0].Sequence != 1 {
		t.Errorf("turn ends %+v", ends)
	}
	if !exists(f.processed("reply.txt")) || f.readWS("hello.txt") != "hello\n" {
		t.Error("the DONE reply was not applied and moved")
	}
	if info, err := f.r.Status(id); err != nil || info.State != runner.StateComplete || info.Request != "" {
		t.Errorf("status %+v, %v", info, err)
	}

	// Nothing more is applied to a complete session.
	err := f.tryApply(f.r, id, "more.txt", "[CREATE_FILE path=\"more.txt\"]\nx\n[/CREATE_FILE]\n")
	var complete *runner.CompleteError
	if !errors.As(err, &complete) || complete.Session != id || err.Error() != "session "+id+" is complete" {
		t.Errorf("error %v, want the session complete", err)
	}
	if f.existsWS("more.txt") || !f.inInbox("more.txt") {
		t.Error("a reply to a complete session was carried out or moved")
	}
}

func TestApplyNoCommands(t *testing.T) {
	f := newFixture(t)
	id := f.create("greet")
	f.apply(id, "chat.txt", "Sure! I will get right on it. What language should I use?\n")
	text := f.request(id, 2)
	if !strings.Contains(text, "## Previous Command Results\n"+protocol.NoCommandsNotice+"\n") {
		t.Errorf("request 2 lacks the notice:\n%s", text[strings.Index(text, "=== CONTEXT ==="):])
	}
	if saved := f.load(id); saved.SequenceNumber != 2 || !slices.Equal(saved.Notices, []string{protocol.NoCommandsNotice}) {
		t.Errorf("saved sequence %d, notices %q", saved.SequenceNumber, saved.Notices)
	}
	f.apply(id, "reply.txt", workReply)
	if text := f.request(id, 3); strings.Contains(text, protocol.NoCommandsNotice) {
		t.Error("the notice stayed for the next request")
	}
	if saved := f.load(id); len(saved.Notices) != 0 {
		t.Errorf("notices %q stayed in the state", saved.Notices)
	}
}

// TestApplyUnusable: a reply that can never be applied (too large, not
// text, one of courier's own requests) is set aside into rejected/, and
// nothing of it runs; replies within the limits are applied.
func TestApplyUnusable(t *testing.T) {
	const body = "[CREATE_FILE path=\"a.txt\"]\nhello\n[/CREATE_FILE]\n"
	latin1 := strings.Repeat("caf\xe9 cr\xe8me ", 20)
	cases := []struct {
		name string
		// text is the reply; "REQUEST" is replaced by the session's own
		// first request.
		text    string
		max     int64
		message string // "" when the reply is applied
		is      func(error) bool
	}{
		{name: "plain reply", text: body},
		{name: "at the size limit", text: body, max: int64(len(body))},
		{name: "over the size limit", text: body, max: int64(len(body)) - 1, message: "is larger than", is: isA[*reply.TooLargeError]},
		{name: "over 2 MB", text: body + strings.Repeat("x", 2<<20), max: 2 << 20, message: "is larger than the 2 MB limit; nothing was run", is: isA[*reply.TooLargeError]},
		{name: "over 512 KB", text: body + strings.Repeat("x", 512<<10), max: 512 << 10, message: "is larger than the 512 KB limit; nothing was run", is: isA[*reply.TooLargeError]},
		{name: "binary", text: "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", message: "nothing was run", is: func(err error) bool { return errors.Is(err, reply.ErrBinary) }},
		{name: "another encoding", text: latin1, message: "nothing was run", is: func(err error) bool { return errors.Is(err, reply.ErrBinary) }},
		{name: "request saved as the reply", text: "REQUEST", message: "is a request written by courier, not the LLM's answer; nothing was run", is: isA[*reply.EchoError]},
		{name: "request with BOM and CRLF", text: "\ufeff\r\nREQUEST-CRLF", message: "is a request written by courier", is: isA[*reply.EchoError]},
		{name: "UTF-16 request", text: "REQUEST-UTF16", message: "is a request written by courier", is: isA[*reply.EchoError]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.max != 0 {
				f.limits.MaxReply = tc.max
			}
			r, rec := f.runner(nil)
			id := f.create("do it")
			req := f.request(id, 1)
			text := strings.NewReplacer("REQUEST-CRLF", strings.ReplaceAll(req, "\n", "\r\n"), "REQUEST-UTF16", utf16LE(req), "REQUEST", req).Replace(tc.text)
			err := f.tryApply(r, id, "reply.txt", text)
			if tc.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				if f.readWS("a.txt") != "hello\n" || f.load(id).SequenceNumber != 2 || !exists(f.processed("reply.txt")) {
					t.Error("the reply was not applied")
				}
				return
			}
			var unapplied *runner.UnappliedError
			if !errors.As(err, &unapplied) || unapplied.Count != 1 {
				t.Fatalf("error %v, want the reply not applied", err)
			}
			aside := eventsOf[runner.ReplySetAside](rec)
			if len(aside) != 1 || !strings.Contains(aside[0].Err.Error(), tc.message) || !tc.is(aside[0].Err) {
				t.Fatalf("set aside %+v, want %q", aside, tc.message)
			}
			if aside[0].MovedTo != f.rejected("reply.txt") || !exists(f.rejected("reply.txt")) || f.inInbox("reply.txt") {
				t.Errorf("moved to %q, want inbox/rejected/reply.txt", aside[0].MovedTo)
			}
			if f.existsWS("a.txt") || f.load(id).SequenceNumber != 1 || len(eventsOf[runner.ReplyTaken](rec)) != 0 {
				t.Error("something of an unusable reply was carried out")
			}
		})
	}
}

func isA[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// TestApplyUnusableUnrouted: a reply file given without a session that
// cannot be read as a reply is set aside before any session is touched.
func TestApplyUnusableUnrouted(t *testing.T) {
	f := newFixture(t)
	id := f.create("do it")
	p := f.save("reply.txt", f.request(id, 1))
	err := f.r.ApplyFrom(context.Background(), &inbox.File{Path: p, Inbox: f.paths.Inbox}, "", "courier process")
	var aside *runner.SetAsideError
	if !errors.As(err, &aside) || !isA[*reply.EchoError](err) || aside.MovedTo != f.rejected("reply.txt") || !exists(aside.MovedTo) {
		t.Fatalf("error %v, want the request set aside into rejected/", err)
	}
	if st := f.load(id); st.SequenceNumber != 1 || len(f.replies(id)) != 0 {
		t.Error("the session changed")
	}
}

// TestRoute: a reply given without a session goes to the session it
// names (in its text, else at the start of its file name), else to the
// most recently updated incomplete one.
func TestRoute(t *testing.T) {
	const marker = "[CREATE_FILE path=\"routed.txt\"]\nx\n[/CREATE_FILE]\n"
	cases := []struct {
		// file and text name the older session {A} ({a} in upper case,
		// {A7} its first seven digits) and the newer one {B}.
		file, text string
		toOlder    bool
	}{
		{"reply.txt", "Session: {A}\n" + marker, true},
		{"{B}_reply.txt", "**Session:** {a}\n" + marker, true},
		{"{A}_reply.txt", marker, true},
		{"{A}_seq0002.txt", marker, true},
		{"{a}-answer.md", marker, true},
		{"{A}", marker, true},
		{"{A}.txt", marker, true},
		{"{A}cafe.txt", marker, false},
		{"{A}0.txt", marker, false},
		{"{A7}.txt", marker, false},
		{"reply.txt", marker, false},
		{"answer-{A}.txt", marker, false},
	}
	for _, tc := range cases {
		t.Run(tc.file+" "+strings.ReplaceAll(tc.text, "\n", " "), func(t *testing.T) {
			f := newFixture(t)
			older := f.create("first")
			newer := f.create("second")
			subst := strings.NewReplacer("{A7}", older[:7], "{A}", older, "{a}", strings.ToUpper(older), "{B}", newer)
			file := subst.Replace(tc.file)
			p := f.save(file, subst.Replace(tc.text))
			if err := f.r.ApplyFrom(context.Background(), &inbox.File{Path: p, Inbox: f.paths.Inbox}, "", "courier process"); err != nil {
				t.Fatal(err)
			}
			want, other := newer, older
			if tc.toOlder {
				want, other = older, newer
			}
			if st := f.load(want); st.SequenceNumber != 2 || f.replies(want)[0].File != file {
				t.Errorf("%s was not applied to %s", file, want)
			}
			if st := f.load(other); st.SequenceNumber != 1 {
				t.Errorf("%s was applied to %s", file, other)
			}
			if !exists(f.processed(file)) {
				t.Error("the reply was not moved into processed/")
			}
		})
	}
}

// TestApplyOtherWorkspace: with --workspace given, a session that works on
// another folder is refused rather than resumed there.
func TestApplyOtherWorkspace(t *testing.T) {
	f := newFixture(t)
	id := f.create("here")
	other := filepath.Join(f.paths.Root, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	paths := f.paths
	paths.Workspace = other
	r := runner.New(runner.Config{Paths: paths, WorkspaceGiven: true, Limits: f.limits, FrontEnds: f.frontEnds()})
	err := r.ApplyFrom(context.Background(), &inbox.File{Path: f.save("reply.txt", workReply), Inbox: f.paths.Inbox}, id, "courier process")
	var otherWS *runner.OtherWorkspaceError
	if !errors.As(err, &otherWS) || otherWS.Session != id || otherWS.Given != other {
		t.Fatalf("error %v, want the other workspace refused", err)
	}
	if f.existsWS("hello.txt") || exists(filepath.Join(other, "hello.txt")) || !f.inInbox("reply.txt") {
		t.Error("the reply was carried out or moved")
	}
}

// TestApplyRunResults: a failing command is a result the LLM reads, not
// an error of the turn.
func TestApplyRunResults(t *testing.T) {
	f := newFixture(t)
	id := f.create("fail")
	f.apply(id, "reply.txt", "[RUN_COMMAND]\necho oops; exit 3\n[/RUN_COMMAND]\n")
	st := f.load(id)
	if len(st.LastResults) != 1 || st.LastResults[0].Status != command.Failed || st.LastResults[0].ExitCode == nil || *st.LastResults[0].ExitCode != 3 {
		t.Fatalf("results %+v", st.LastResults)
	}
	if text := f.request(id, 2); !strings.Contains(text, "[FAILED] RUN_COMMAND:") || !strings.Contains(text, "  Output: oops\n") {
		t.Errorf("request 2 does not show the failure:\n%s", text[strings.Index(text, "## Previous"):])
	}
}
