package loop

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// BenchmarkReadReply reads a 20 MB reply holding one CREATE_FILE, from the
// file to the parsed command. reply-x is the bytes allocated per byte of
// reply: the memory a large reply costs, as a multiple of its size.
func BenchmarkReadReply(b *testing.B) {
	const size = 20 << 20
	line := "\tfmt.Println(\"a line of generated code that fills the file\")\n"
	body := strings.Repeat(line, size/len(line))
	for _, form := range []struct{ name, text string }{
		{"lf", "I'll write it.\n\n[CREATE_FILE path=\"big.go\"]\n" + body + "[/CREATE_FILE]\n"},
		{"crlf", strings.ReplaceAll("I'll write it.\n\n[CREATE_FILE path=\"big.go\"]\n"+body+"[/CREATE_FILE]\n", "\n", "\r\n")},
	} {
		p := filepath.Join(b.TempDir(), "reply.txt")
		if err := os.WriteFile(p, []byte(form.text), 0o644); err != nil {
			b.Fatal(err)
		}
		l := New(DefaultPaths(b.TempDir()), Options{MaxReply: 64 << 20})
		b.Run(form.name, func(b *testing.B) {
			b.ReportAllocs()
			var allocated uint64
			for b.Loop() {
				before := allocatedBytes()
				r, err := l.ReadReply(p)
				allocated += allocatedBytes() - before
				if err != nil || len(r.Parsed.Commands) != 1 || len(r.Parsed.Commands[0].Content) != len(body) {
					b.Fatalf("reply not read whole: %v", err)
				}
			}
			b.ReportMetric(float64(allocated)/float64(b.N)/float64(len(form.text)), "reply-x")
		})
	}
}

// BenchmarkReadFileLarge shows a 500 MB text file in a request, 500 lines
// of it as the default read_lines does: the memory must not follow the
// file's size.
func BenchmarkReadFileLarge(b *testing.B) {
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.log"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const size = 500 << 20
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
	l := New(DefaultPaths(b.TempDir()), Options{})
	b.ReportAllocs()
	var allocated uint64
	for b.Loop() {
		before := allocatedBytes()
		got := l.requested(ws, []session.ReadRequest{{Path: "big.log"}})
		allocated += allocatedBytes() - before
		if len(got) != 1 || !strings.Contains(got[0].Text, "   1 | 000000000 a log line") {
			b.Fatalf("file not shown: %.200q", got)
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
