package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

func TestCreate(t *testing.T) {
	f := newFixture(t)
	f.writeWS("main.go", "package main\n")
	id, err := f.r.Create("  add a --verbose flag\n", runner.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !history.ValidID(id) {
		t.Errorf("session id %q is not 8 hex digits", id)
	}
	p := filepath.Join(f.paths.Outbox, id+"_seq0001.txt")
	text := readFile(t, p)
	head := "=== HEADER ===\nSession: " + id + "\nSequence: 1\nTask: add a --verbose flag\n\n=== PROTOCOL ===\n"
	if !strings.HasPrefix(text, head) {
		t.Errorf("request begins\n%.200s\nwant\n%s", text, head)
	}
	for _, want := range []string{"\n## Workspace Files\n  main.go (13 bytes)\n", "\n=== PROMPT ===\nadd a --verbose flag\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("request lacks %q", want)
		}
	}
	if strings.Contains(text, "## Previous Command Results") || !strings.HasSuffix(text, "add a --verbose flag\n") {
		t.Errorf("first request:\n%s", text[strings.Index(text, "=== CONTEXT ==="):])
	}
	if !frontend.IsRequest(text) {
		t.Error("the request is not recognised as one")
	}
	if got := names(t, f.paths.Outbox); len(got) != 1 {
		t.Errorf("outbox holds %v", got)
	}

	// The person is told of the session and its request.
	started := eventsOf[runner.SessionStarted](f.rec)
	written := eventsOf[runner.RequestWritten](f.rec)
	if len(started) != 1 || started[0] != (runner.SessionStarted{Session: id, Task: "add a --verbose flag"}) {
		t.Errorf("started %+v", started)
	}
	if len(written) != 1 || len(written[0].Parts) == 0 {
		t.Fatalf("written %+v", written)
	}
	w := written[0]
	w.Parts = nil
	if !reflect.DeepEqual(w, runner.RequestWritten{Session: id, Sequence: 1, Path: p, Text: text, Size: int64(len(text)), Tokens: human.Tokens(text)}) {
		t.Errorf("written %+v", written)
	}

	// The session file has the protocol's fields, in its JSON names.
	var saved map[string]any
	if err := json.Unmarshal([]byte(readFile(t, f.store.Path(id))), &saved); err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.Abs(f.paths.Workspace)
	want := map[string]any{
		"sessionId": id, "task": "add a --verbose flag", "sequenceNumber": 1.0,
		"isComplete": false, "lastResults": []any{}, "readFileRequests": []any{}, "workspace": ws,
	}
	for k, v := range want {
		got, _ := json.Marshal(saved[k])
		w, _ := json.Marshal(v)
		if string(got) != string(w) {
			t.Errorf("%s is %s, want %s", k, got, w)
		}
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		s, _ := saved[k].(string)
		if at, err := time.Parse(time.RFC3339Nano, s); err != nil || time.Since(at) > time.Hour || time.Since(at) < 0 {
			t.Errorf("%s is %q, want the current time", k, s)
		}
	}
	if info, err := f.r.Status(id); err != nil || info.State != runner.StateWaiting || info.Sequence != 1 || info.Request != p {
		t.Errorf("status %+v, %v", info, err)
	}
}

func TestCreateIncludes(t *testing.T) {
	f := newFixture(t)
	f.writeWS("docs/a.md", "# A\n")
	f.writeWS("docs/b.txt", "b\n")
	id, err := f.r.Create("document it", runner.CreateOptions{Includes: []string{"docs/*.md"}})
	if err != nil {
		t.Fatal(err)
	}
	text := f.request(id, 1)
	if !strings.Contains(text, "\n## Requested File Contents\n--- docs/a.md ---\n   1 | # A\n--- end docs/a.md ---\n") || strings.Contains(text, "--- docs/b.txt ---") {
		t.Errorf("included files in the first request:\n%s", text[strings.Index(text, "=== CONTEXT ==="):])
	}
	// A request with a pack is announced without its text kept in memory:
	// its size, tokens and content (for the clipboard) are the file's.
	written := eventsOf[runner.RequestWritten](f.rec)
	if len(written) != 1 {
		t.Fatalf("%d requests announced", len(written))
	}
	if w := written[0]; w.Text != text || w.Size != int64(len(text)) || w.Tokens != human.Tokens(text) {
		t.Errorf("announced a request of %d bytes, %d tokens, content equal to the file: %v; the file has %d bytes, %d tokens",
			w.Size, w.Tokens, w.Text == text, len(text), human.Tokens(text))
	}
	// Included files belong to the first request only.
	f.apply(id, "reply.txt", "[MESSAGE]\nreading\n[/MESSAGE]\n")
	if strings.Contains(f.request(id, 2), "--- docs/a.md ---") {
		t.Error("the included file is shown again in request 2")
	}
}

func TestCreateRefused(t *testing.T) {
	cases := []struct {
		name    string
		task    string
		noWS    bool
		message string
		is      func(error) bool
	}{
		{"empty task", "", false, "the task is empty", isA[runner.EmptyTaskError]},
		{"blank task", "  \n\t ", false, "the task is empty", isA[runner.EmptyTaskError]},
		{"no workspace folder", "do it", true, "not a folder", isA[*runner.WorkspaceError]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.noWS {
				if err := os.Remove(f.paths.Workspace); err != nil {
					t.Fatal(err)
				}
			}
			_, err := f.r.Create(tc.task, runner.CreateOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.message) || !tc.is(err) {
				t.Fatalf("error %v, want %q", err, tc.message)
			}
			if n := names(t, f.paths.Outbox); len(n) != 0 {
				t.Errorf("outbox holds %v", n)
			}
			if n := names(t, f.paths.Sessions); len(n) != 0 {
				t.Errorf("sessions holds %v", n)
			}
			if len(f.rec.all()) != 0 {
				t.Errorf("events %s for a refused session", eventTypes(f.rec.all()))
			}
		})
	}
}

func TestCreateIDsDiffer(t *testing.T) {
	f := newFixture(t)
	seen := map[string]bool{}
	for range 20 {
		id := f.create("task")
		if seen[id] {
			t.Fatalf("session id %s given twice", id)
		}
		seen[id] = true
	}
}

// TestCreateUnknownProtocol: a session cannot be started in a protocol
// courier does not speak.
func TestCreateUnknownProtocol(t *testing.T) {
	f := newFixture(t)
	if _, err := f.r.Create("task", runner.CreateOptions{Protocol: "smoke-signals"}); err == nil || !strings.Contains(err.Error(), `unknown protocol "smoke-signals"`) {
		t.Errorf("error %v", err)
	}
	if n := names(t, f.paths.Sessions); len(n) != 0 {
		t.Errorf("sessions holds %v", n)
	}
}

// TestServeAnnouncesResumedSession: serving a session started by another
// run shows its request again and where the reply is awaited; the run that
// started it does not announce it twice.
func TestServeAnnouncesResumedSession(t *testing.T) {
	f := newFixture(t)
	id := f.create("greet")
	r, rec := f.runner(nil)
	sv := f.serve(r, id, f.watcher(id))
	waitFor(t, "the watch to wait for a reply", func() bool { return len(eventsOf[runner.WaitingForReply](rec)) > 0 })
	sv.cancel()
	var stopped *runner.InterruptedError
	if err := sv.wait(t); !errors.As(err, &stopped) || stopped.Session != id || !errors.Is(err, context.Canceled) {
		t.Errorf("Serve after Ctrl-C: %v", err)
	}
	events := rec.all()
	if len(events) < 2 {
		t.Fatalf("events %s", eventTypes(events))
	}
	written, ok := events[0].(runner.RequestWritten)
	if !ok || !written.Resumed || written.Rewritten || written.Sequence != 1 || written.Text != f.request(id, 1) {
		t.Errorf("first event %+v, want request 1 shown again", events[0])
	}
	if w, ok := events[1].(runner.WaitingForReply); !ok || w != (runner.WaitingForReply{Session: id, Sequence: 1, From: "in inbox/"}) {
		t.Errorf("second event %+v, want waiting for a reply in inbox/", events[1])
	}

	// The run that created the session goes straight to waiting.
	g := newFixture(t)
	id2 := g.create("greet")
	before := len(g.rec.all())
	sv = g.serve(g.r, id2, g.watcher(id2))
	waitFor(t, "the watch to wait for a reply", func() bool { return len(eventsOf[runner.WaitingForReply](g.rec)) > 0 })
	sv.cancel()
	sv.wait(t)
	if got := g.rec.all()[before:]; len(got) == 0 || eventTypes(got[:1]) != "WaitingForReply" {
		t.Errorf("events of the creating run: %s", eventTypes(got))
	}
	if n := len(eventsOf[runner.RequestWritten](g.rec)); n != 1 {
		t.Errorf("the request was announced %d times", n)
	}
}

// TestRequestRewritten: a request file the person deleted is written again
// when the session is served, exactly as before; one that is there is
// left alone. RequestText renders it without writing.
func TestRequestRewritten(t *testing.T) {
	f := newFixture(t)
	f.writeWS("a.txt", "a\n")
	id := f.create("count")
	p := f.requestPath(id, 1)
	first := readFile(t, p)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	rec := f.serveBacklog(id)
	if info, err := os.Stat(p); err != nil || !info.ModTime().Equal(old) || len(eventsOf[runner.RequestWritten](rec)) != 0 {
		t.Errorf("an existing request was written again")
	}

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	text, err := f.r.RequestText(id, false)
	if err != nil || text != first {
		t.Errorf("RequestText of a missing request: %v\n%s", err, text)
	}
	if exists(p) {
		t.Error("RequestText wrote the request")
	}
	rec = f.serveBacklog(id)
	if readFile(t, p) != first {
		t.Error("the rewritten request differs")
	}
	written := eventsOf[runner.RequestWritten](rec)
	if len(written) != 1 || !written[0].Rewritten || written[0].Path != p || written[0].Text != first {
		t.Errorf("rewrite announced as %+v", written)
	}
}

// TestDamagedRequestRewritten: requests are not synced to the disk, so a
// power cut can leave one cut short, or its right size but holding zeros.
// Checked against the size and checksum its state recorded, it is
// rendered afresh by RequestText and written again when the session is
// served, never shown or sent as it was; the state then records the new
// one, so the next serve leaves it alone.
func TestDamagedRequestRewritten(t *testing.T) {
	for name, damage := range map[string]func(string) string{
		"short": func(s string) string { return s[:len(s)/2] },
		"zeros": func(s string) string { return s[:100] + strings.Repeat("\x00", len(s)-100) },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.writeWS("a.txt", "a\n")
			id := f.create("count")
			p := f.requestPath(id, 1)
			first := readFile(t, p)
			if st := f.load(id); st.RequestSize != int64(len(first)) || st.RequestSum == 0 {
				t.Fatalf("the state records request size %d, sum %d; the request is %d bytes", st.RequestSize, st.RequestSum, len(first))
			}
			writeFile(t, p, damage(first))

			text, err := f.r.RequestText(id, false)
			if err != nil || text != first {
				t.Errorf("RequestText of a damaged request: %v\n%q", err, text)
			}
			rec := f.serveBacklog(id)
			if got := readFile(t, p); got != first {
				t.Errorf("the request after serving:\n%q", got)
			}
			written := eventsOf[runner.RequestWritten](rec)
			if len(written) != 1 || !written[0].Rewritten || !written[0].Damaged || written[0].Text != first {
				t.Errorf("rewrite announced as %+v", written)
			}
			if n := len(eventsOf[runner.RequestWritten](f.serveBacklog(id))); n != 0 {
				t.Errorf("the rewritten request was written %d times more", n)
			}
		})
	}
}

// TestDamagedLastRequest: the last request of a complete session cannot
// be written again (its results were the turn before's); damaged, it is
// refused with a reason rather than shown.
func TestDamagedLastRequest(t *testing.T) {
	f := newFixture(t)
	id := f.create("count")
	f.apply(id, "reply.txt", "Sequence: 1\n[DONE]\ndone\n[/DONE]\n")
	if st := f.load(id); !st.IsComplete {
		t.Fatal("the session is not complete")
	}
	p := f.requestPath(id, 1)
	whole := readFile(t, p)
	writeFile(t, p, whole[:len(whole)-1])
	if text, err := f.r.RequestText(id, false); err == nil || !strings.Contains(err.Error(), "not as courier wrote it") {
		t.Errorf("RequestText of a damaged last request: %v\n%q", err, text)
	}
}

// serveBacklog serves session id, as 'courier process' does, with a
// runner of its own whose events it returns.
func (f *fixture) serveBacklog(id string) *recorder {
	f.t.Helper()
	r, rec := f.runner(nil)
	s, err := r.Hold(id, "courier process")
	if err != nil {
		f.t.Fatal(err)
	}
	defer s.Release()
	if err := s.Serve(context.Background(), inbox.Queue{Dir: f.paths.Inbox}.Source(id, false)); err != nil {
		f.t.Fatal(err)
	}
	return rec
}
