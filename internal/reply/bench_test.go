package reply

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/protocol"
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
		b.Run(form.name, func(b *testing.B) {
			b.ReportAllocs()
			var allocated uint64
			for b.Loop() {
				before := allocatedBytes()
				r, err := Read(p, "reply.txt", 64<<20, protocol.Tags{})
				allocated += allocatedBytes() - before
				if err != nil || len(r.Parsed.Commands) != 1 || len(r.Parsed.Commands[0].Content) != len(body) {
					b.Fatalf("reply not read whole: %v", err)
				}
			}
			b.ReportMetric(float64(allocated)/float64(b.N)/float64(len(form.text)), "reply-x")
		})
	}
}

// allocatedBytes is the heap allocated so far by the whole program.
func allocatedBytes() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// BenchmarkDecode decodes a reply saved with CRLF line endings.
func BenchmarkDecode(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		raw := (strings.ReplaceAll(strings.Repeat("I'll add the handler.\n[RUN_COMMAND]\ngo test ./...\n[/RUN_COMMAND]\n", size/50), "\n", "\r\n"))
		b.Run(fmt.Sprintf("crlf/%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
