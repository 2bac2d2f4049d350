package runner_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/courier-agent/courier/internal/hint"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/session"
)

func TestNewSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	f.writeWS("main.go", "package main\n")
	st, p, err := f.l.NewSession("  add a --verbose flag\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !session.ValidID(st.SessionID) {
		t.Errorf("session id %q is not 8 hex digits", st.SessionID)
	}
	if want := filepath.Join(f.paths.Outbox, st.SessionID+"_seq0001.txt"); p != want {
		t.Errorf("outbox %s, want %s", p, want)
	}
	text := readFile(t, p)
	head := "=== HEADER ===\nSession: " + st.SessionID + "\nSequence: 1\nTask: add a --verbose flag\n\n=== PROTOCOL ===\n"
	if !strings.HasPrefix(text, head) {
		t.Errorf("outbox begins\n%.200s\nwant\n%s", text, head)
	}
	for _, want := range []string{"\n## Workspace Files\n  main.go (13 bytes)\n", "\n=== PROMPT ===\nadd a --verbose flag\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("outbox lacks %q", want)
		}
	}
	if strings.Contains(text, "## Previous Command Results") || !strings.HasSuffix(text, "add a --verbose flag\n") {
		t.Errorf("first outbox:\n%s", text[strings.Index(text, "=== CONTEXT ==="):])
	}
	if !protocol.IsOutbox(text) {
		t.Error("the outbox is not recognised as one")
	}

	// The session file has the protocol's fields, in its JSON names.
	var saved map[string]any
	if err := json.Unmarshal([]byte(readFile(t, f.l.Store.Path(st.SessionID))), &saved); err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.Abs(f.paths.Workspace)
	want := map[string]any{
		"sessionId": st.SessionID, "task": "add a --verbose flag", "sequenceNumber": 1.0,
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
	loaded := f.load(st)
	if loaded.SessionID != st.SessionID || loaded.Task != st.Task || loaded.SequenceNumber != 1 {
		t.Errorf("loaded %+v", loaded)
	}
}

func TestNewSessionIncludes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	f.writeWS("docs/a.md", "# A\n")
	f.writeWS("docs/b.txt", "b\n")
	st, p, err := f.l.NewSession("document it", []string{"docs/*.md"})
	if err != nil {
		t.Fatal(err)
	}
	text := readFile(t, p)
	if !strings.Contains(text, "\n## Requested File Contents\n--- docs/a.md ---\n   1 | # A\n--- end docs/a.md ---\n") || strings.Contains(text, "--- docs/b.txt ---") {
		t.Errorf("included files in the first outbox:\n%s", text[strings.Index(text, "=== CONTEXT ==="):])
	}
	if st.SequenceNumber != 1 {
		t.Errorf("sequence %d", st.SequenceNumber)
	}
}

func TestNewSessionRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		task    string
		noWS    bool
		message string
	}{
		{"empty task", "", false, "the task is empty"},
		{"blank task", "  \n\t ", false, "the task is empty"},
		{"no workspace folder", "do it", true, "is not a folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, runner.Options{})
			if tc.noWS {
				if err := os.Remove(f.paths.Workspace); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := f.l.NewSession(tc.task, nil)
			if err == nil || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %v, want %q", err, tc.message)
			}
			if hint.Of(err) == "" {
				t.Error("the error has no hint for the person")
			}
			if n := names(t, f.paths.Outbox); len(n) != 0 {
				t.Errorf("outbox holds %v", n)
			}
			if n := names(t, f.paths.Sessions); len(n) != 0 {
				t.Errorf("sessions holds %v", n)
			}
		})
	}
}

func TestNewSessionIDsDiffer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	seen := map[string]bool{}
	for range 20 {
		st := f.newSession("task")
		if seen[st.SessionID] {
			t.Fatalf("session id %s given twice", st.SessionID)
		}
		seen[st.SessionID] = true
	}
}

const simpleReply = "Session: 1a2b3c4d\nSequence: 2\n\n[CREATE_FILE path=\"a.txt\"]\nhello\n[/CREATE_FILE]\n"

func utf16LE(s string) []byte {
	out := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

func TestReadReply(t *testing.T) {
	t.Parallel()
	outbox := protocol.Render(protocol.Outbox{Session: "1a2b3c4d", Sequence: 1, Task: "do it"})
	latin1 := []byte(strings.Repeat("caf\xe9 cr\xe8me ", 20))
	cases := []struct {
		name    string
		raw     []byte
		max     int64
		message string // "" when the reply is accepted
		is      error
	}{
		{name: "plain reply", raw: []byte(simpleReply)},
		{name: "at the size limit", raw: []byte(simpleReply), max: int64(len(simpleReply))},
		{name: "over the size limit", raw: []byte(simpleReply), max: int64(len(simpleReply)) - 1, message: "is larger than"},
		{name: "over 2 MB", raw: []byte(simpleReply + strings.Repeat("x", 2<<20)), max: 2 << 20, message: "is larger than the 2 MB limit; nothing was run"},
		{name: "over 512 KB", raw: []byte(simpleReply + strings.Repeat("x", 512<<10)), max: 512 << 10, message: "is larger than the 512 KB limit; nothing was run"},
		{name: "binary", raw: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), message: "nothing was run", is: protocol.ErrBinary},
		{name: "another encoding", raw: latin1, message: "nothing was run", is: protocol.ErrBinary},
		{name: "outbox saved as the reply", raw: []byte(outbox), message: "is a request written by courier, not the LLM's answer; nothing was run"},
		{name: "outbox with BOM and CRLF", raw: []byte("\ufeff\r\n" + strings.ReplaceAll(outbox, "\n", "\r\n")), message: "is a request written by courier"},
		{name: "UTF-16 outbox", raw: utf16LE(outbox), message: "is a request written by courier"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, runner.Options{MaxReply: tc.max})
			p := filepath.Join(f.paths.Inbox, "reply.txt")
			if err := os.WriteFile(p, tc.raw, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := f.l.ReadReply(p)
			if tc.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.Path != p || string(r.Raw) != string(tc.raw) || r.Parsed.Session != "1a2b3c4d" || r.Parsed.Sequence != 2 || len(r.Parsed.Commands) != 1 {
					t.Errorf("reply %+v", r)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %v, want %q", err, tc.message)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if hint.Of(err) == "" {
				t.Error("the error has no hint for the person")
			}
		})
	}
}

func TestReadReplyMissing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	if _, err := f.l.ReadReply(filepath.Join(f.paths.Inbox, "nope.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v, want one for a missing file", err)
	}
}

// TestReplyHash: the same reply saved by different editors is one reply.
func TestReplyHash(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	variants := map[string][]byte{
		"lf":         []byte(simpleReply),
		"crlf":       []byte(strings.ReplaceAll(simpleReply, "\n", "\r\n")),
		"bom":        append([]byte("\ufeff"), simpleReply...),
		"bom crlf":   append([]byte("\ufeff"), strings.ReplaceAll(simpleReply, "\n", "\r\n")...),
		"cr":         []byte(strings.ReplaceAll(simpleReply, "\n", "\r")),
		"utf-16 bom": utf16LE(simpleReply),
	}
	var first string
	for name, raw := range variants {
		p := filepath.Join(f.paths.Inbox, strings.ReplaceAll(name, " ", "-")+".txt")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		r := f.readReply(p)
		if first == "" {
			first = r.Hash
		}
		if r.Hash != first {
			t.Errorf("%s: hash %s differs from %s", name, r.Hash, first)
		}
		if len(r.Parsed.Commands) != 1 || r.Parsed.Commands[0].Content != "hello\n" {
			t.Errorf("%s: commands %+v", name, r.Parsed.Commands)
		}
	}
	other := f.readReply(f.inbox("other.txt", strings.Replace(simpleReply, "hello", "hallo", 1)))
	if other.Hash == first {
		t.Error("a different reply has the same hash")
	}
}

func TestRoute(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	cases := []struct {
		file, text, want string
	}{
		{"reply.txt", "Session: 1a2b3c4d\nSequence: 2\n[DONE]\nx\n[/DONE]\n", "1a2b3c4d"},
		{"deadbeef_reply.txt", "**Session:** 1A2B3C4D\n[DONE]\nx\n[/DONE]\n", "1a2b3c4d"},
		{"deadbeef_seq0002.txt", "[DONE]\nx\n[/DONE]\n", "deadbeef"},
		{"DEADBEEF-answer.md", "no commands", "deadbeef"},
		{"deadbeef", "no commands", "deadbeef"},
		{"deadbeef.txt", "no commands", "deadbeef"},
		{"deadbeefcafe.txt", "no commands", ""},
		{"deadbeef0.txt", "no commands", ""},
		{"deadbee.txt", "no commands", ""},
		{"reply.txt", "no commands", ""},
		{"answer-deadbeef.txt", "no commands", ""},
	}
	for _, tc := range cases {
		r := f.readReply(f.inbox(tc.file, tc.text))
		if got := runner.Route(r); got != tc.want {
			t.Errorf("%s with %q: routed to %q, want %q", tc.file, tc.text, got, tc.want)
		}
	}
}
