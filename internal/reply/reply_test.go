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

// A reply's hash names its text, however it was encoded, and is the same
// whether Decode copied the text or not.
func TestHashTextIsTheTextsHash(t *testing.T) {
	for _, raw := range []string{"", "[DONE]\nok\n[/DONE]\n", "a\r\nb\r\n", "\xef\xbb\xbfx\n", strings.Repeat("long line\r\n", 20000)} {
		text, err := Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hashText([]byte(raw), text), history.Hash([]byte(text)); got != want {
			t.Errorf("hash of %.20q = %s, want %s", raw, got, want)
		}
	}
}

// A reply routed with one front end is parsed again from its text for a
// session that speaks another, and left as it is for the same one.
func TestForParsesAgainOnlyForAnotherFrontEnd(t *testing.T) {
	text := "```json\n{\"protocolVersion\": \"1.0\", \"operations\": [{\"type\": \"shell\", \"id\": \"s\", \"command\": \"ls\"}]}\n```\n"
	rep, err := New("r.md", []byte(text), 0, protocol.Tags{})
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
	hash := history.Hash([]byte(text))
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
