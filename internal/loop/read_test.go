package loop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// A broad pattern brings a bounded number of files into the outbox, and
// says how many more there were.
func TestRequestedGlobIsCapped(t *testing.T) {
	dir := t.TempDir()
	for i := range maxGlobFiles + 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	l := New(DefaultPaths(t.TempDir()), Options{})
	got := l.requested(ws, []session.ReadRequest{{Path: "*.txt"}})
	if len(got) != maxGlobFiles+1 {
		t.Fatalf("%d parts, want a note and %d files", len(got), maxGlobFiles)
	}
	if !strings.Contains(got[0].Text, fmt.Sprintf("%d files match; the first %d are shown", maxGlobFiles+5, maxGlobFiles)) {
		t.Errorf("note = %q", got[0].Text)
	}
}

// A reply's hash names its text, however it was encoded, and is the same
// whether Decode copied the text or not.
func TestHashTextIsTheTextsHash(t *testing.T) {
	for _, raw := range []string{"", "[DONE]\nok\n[/DONE]\n", "a\r\nb\r\n", "\xef\xbb\xbfx\n", strings.Repeat("long line\r\n", 20000)} {
		text, err := protocol.Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hashText([]byte(raw), text), session.Hash([]byte(text)); got != want {
			t.Errorf("hash of %.20q = %s, want %s", raw, got, want)
		}
	}
}
