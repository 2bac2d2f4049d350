package loop

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// READ_FILE of a named pipe or a socket, by name or through a glob, gets a
// clear note and never waits; a sparse file of 100 GB is shown by its first
// lines without being read whole.
func TestRequestedSpecialAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", filepath.Join(dir, "sock.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	var lines strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	sparse := filepath.Join(dir, "sparse.log")
	if err := os.WriteFile(sparse, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 100<<30); err != nil {
		t.Skipf("the file system cannot hold a 100 GB sparse file: %v", err)
	}
	// A device reached through a symlink is outside the workspace anyway.
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	l := New(DefaultPaths(t.TempDir()), Options{})
	done := make(chan []protocol.FileContent)
	go func() {
		done <- l.requested(ws, []session.ReadRequest{{Path: "pipe.txt"}, {Path: "sock.txt"}, {Path: "*.txt"}, {Path: "sparse.log"}, {Path: "zero"}})
	}()
	var got []protocol.FileContent
	select {
	case got = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("READ_FILE of a pipe, a socket or a sparse file did not finish")
	}
	want := map[string]string{
		"pipe.txt": "(not shown: 'pipe.txt' is a named pipe (FIFO), not a regular file; READ_FILE shows regular files only)",
		"sock.txt": "(not shown: 'sock.txt' is a socket, not a regular file; READ_FILE shows regular files only)",
	}
	if len(got) != 4 {
		t.Fatalf("%d parts, want pipe, socket (the glob adds nothing new), the sparse file and the device: %+v", len(got), got)
	}
	if got[3].Text != "(REJECTED: Path 'zero' is outside workspace)" {
		t.Errorf("zero: %q", got[3].Text)
	}
	for _, f := range got[:2] {
		if f.Text != want[f.Path] {
			t.Errorf("%s: %q", f.Path, f.Text)
		}
	}
	text := got[2].Text
	if !strings.HasPrefix(text, "   1 | line 1\n") || !strings.Contains(text, " 500 | line 500\n") ||
		!strings.HasSuffix(text, "[... the file goes on after line 500 (100.0 GB in all); request the next lines with [READ_FILE path=\"sparse.log\" lines=\"501-1000\"] ...]\n") {
		t.Errorf("sparse file shown as %.100q ... %q", text, text[max(0, len(text)-200):])
	}
}
