package reply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/protocol"
)

// A reply's hash names its text, however it was encoded.
func TestHashTextIsTheTextsHash(t *testing.T) {
	for _, raw := range []string{"", "[DONE]\nok\n[/DONE]\n", "a\r\nb\r\n", "\xef\xbb\xbfx\n", strings.Repeat("long line\r\n", 20000)} {
		text, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hashText(text), history.Hash(text); got != want {
			t.Errorf("hash of %.20q = %s, want %s", raw, got, want)
		}
	}
}

// A reply routed with one front end is parsed again from its text for a
// session that speaks another, and left as it is for the same one.
func TestForParsesAgainOnlyForAnotherFrontEnd(t *testing.T) {
	text := "```json\n{\"protocolVersion\": \"1.0\", \"operations\": [{\"type\": \"shell\", \"id\": \"s\", \"command\": \"ls\"}]}\n```\n"
	rep, err := New("r.md", text, 0, protocol.Tags{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Parsed.Commands); n != 0 {
		t.Fatalf("the tag protocol found %d commands in a JSON reply", n)
	}
	json := rep.For(agentspaces.Chat{})
	if len(json.Parsed.Commands) != 1 || json.Parsed.Commands[0].Command != "ls" {
		t.Fatalf("read for the JSON protocol: %+v", json.Parsed.Commands)
	}
	if json.Text != rep.Text || json.Hash != rep.Hash || json.Name != rep.Name {
		t.Error("reading for another front end changed the reply itself")
	}
	if again := json.For(agentspaces.Chat{}); len(again.Parsed.Commands) != 1 {
		t.Errorf("read again for the same front end: %+v", again.Parsed.Commands)
	}
}

// Holds finds the reply in its file however it was saved, refuses a file
// that holds something else, and reads no further than the limit.
func TestHolds(t *testing.T) {
	dir := t.TempDir()
	text := "[DONE]\nok\n[/DONE]\n"
	hash := history.Hash(text)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, content string
		max           int64
		want          bool
	}{
		{"same.txt", text, 0, true},
		{"crlf.txt", strings.ReplaceAll(text, "\n", "\r\n"), 100, true},
		{"other.txt", "[DONE]\nanother\n[/DONE]\n", 0, false},
		{"limit.txt", text, int64(len(text)), true},
		{"over.txt", strings.ReplaceAll(text, "\n", "\r\n"), int64(len(text)), false},
	} {
		if got := Holds(write(tc.name, tc.content), hash, tc.max); got != tc.want {
			t.Errorf("%s (limit %d): Holds = %v, want %v", tc.name, tc.max, got, tc.want)
		}
	}
	if Holds(filepath.Join(dir, "missing.txt"), hash, 0) {
		t.Error("a missing file holds the reply")
	}
}

// A reply whose header names an id that is none goes to that id, which no
// session has, never to the default session; words of prose, a line in a
// command block and a header naming a real id are read as before.
func TestRouteKeepsAMistypedSession(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"r.txt", "Session: e1bfb16\nSequence: 2\n[DONE]\nx\n[/DONE]\n", "e1bfb16"},
		{"r.txt", "**Session ID:** `E1BFB1699`\n\n[DONE]\nx\n[/DONE]\n", "e1bfb1699"},
		{"r.txt", "Here you go.\n> Session: e1bfb1g9\n[MESSAGE]\nx\n[/MESSAGE]\n", "e1bfb1g9"},
		{"r.txt", "Session: e1bfb169\n[DONE]\nx\n[/DONE]\n", "e1bfb169"},
		{"r.txt", "**Session:** bfdbecb\n[DONE]\nx\n[/DONE]\n", "bfdbecb"},
		{"r.txt", "Session: finished\n[DONE]\nx\n[/DONE]\n", ""},
		{"r.txt", "This session: 42 files.\n[DONE]\nx\n[/DONE]\n", ""},
		{"r.txt", "[CREATE_FILE path=\"a.yaml\"]\nsession: 30m15s\n[/CREATE_FILE]\n", ""},
		{"e1bfb169_reply.txt", "Session: e1bfb16\n[DONE]\nx\n[/DONE]\n", "e1bfb169"},
	}
	for _, tt := range tests {
		rep, err := New(tt.name, tt.text, 0, protocol.Tags{})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Route(agentspaces.Chat{}); got != tt.want {
			t.Errorf("Route of %q = %q, want %q", tt.text, got, tt.want)
		}
	}
}
