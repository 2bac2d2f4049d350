package runner

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
	"github.com/courier-agent/courier/internal/workspace"
)

// requested is requestedShown's file contents.
func (rn *Runner) requested(ws *workspace.Workspace, reqs []history.ReadRequest, words command.Words) []frontend.FileContent {
	out, _, _ := rn.requestedShown(ws, reqs, words)
	return out
}

// reader is a runner that shows requested files as courier's defaults do.
func reader(t testing.TB) *Runner {
	return New(Config{Paths: DefaultPaths(t.TempDir()), Limits: Limits{ReadLines: 500}})
}

// READ_FILE of a named pipe or a socket, by name or through a glob, gets a
// clear note and never waits; a sparse file of 100 GB is shown by its first
// lines without being read whole.
func TestRequestedSpecialAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	sandboxtest.Mkfifo(t, filepath.Join(dir, "pipe.txt"))
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
	l := reader(t)
	done := make(chan []frontend.FileContent)
	go func() {
		done <- l.requested(ws, []history.ReadRequest{{Path: "pipe.txt"}, {Path: "sock.txt"}, {Path: "*.txt"}, {Path: "sparse.log"}, {Path: "zero"}}, protocol.Tags{}.Words())
	}()
	var got []frontend.FileContent
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

// BenchmarkReadFileLarge shows a 300 MB text file in a request, 500 lines
// of it as the default read_lines does: the memory must not follow the
// file's size.
func BenchmarkReadFileLarge(b *testing.B) {
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.log"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const size = 300 << 20
	for n := 0; n < size; {
		k, _ := fmt.Fprintf(w, "%09d a log line of moderate length, as services write them\n", n)
		n += k
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	ws, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	l := reader(b)
	b.ReportAllocs()
	var allocated uint64
	for b.Loop() {
		before := allocatedBytes()
		got := l.requested(ws, []history.ReadRequest{{Path: "big.log"}}, protocol.Tags{}.Words())
		allocated += allocatedBytes() - before
		if len(got) != 1 || !strings.Contains(got[0].Text, "   1 | 000000000 a log line") {
			b.Fatalf("file not shown: %.200v", got)
		}
	}
	b.ReportMetric(float64(allocated)/float64(b.N)/(1<<20), "MB-allocated")
}

// allocatedBytes is the heap allocated so far by the whole program.
func allocatedBytes() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
