package protocol

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

// The parser is linear in time and memory on any input. These benchmarks
// parse an ordinary reply and adversarial ones at the same sizes; run them
// with go test -bench . -benchmem ./internal/protocol/, or make bench for
// the goals (ordinary replies at 300 MB/s or more, the worst adversarial
// input at most 2x slower per byte). MB/s must stay roughly flat as the
// size grows. Memory follows the number of commands returned (a
// command.Command is about 200 bytes), never the number of tags rescanned.
//
// On a shared 2-core machine, wall-clock MB/s vary by up to a factor of
// two from run to run, so a single run says little: make bench keeps the
// best of several and prints today's figures. Each benchmark first lets
// the heap settle (see settle), so that its rounds time the parser rather
// than the machine faulting in memory the runtime had given back. For how
// much slower an adversarial input is, BenchmarkParseRatio times it and
// the ordinary reply in alternation, so that both of a pair see the same
// machine. Both run with the collector set as courier sets it (see
// courierGC). The
// slowest inputs per byte are those with the most lines per byte (tags
// behind invisible characters, unknown tags, task lists): the parser's
// cost is mostly per line and per command, not per byte.

// benchSizes are the input sizes every benchmark runs at.
var benchSizes = []int{1 << 20, 10 << 20, 50 << 20}

// ordinaryReply is a typical reply: prose, a fenced file, an edit, a run.
const ordinaryReply = `I'll add the handler and a test, then run the suite.

### Handler

[CREATE_FILE path="internal/api/handler.go"]
` + "```go" + `
package api

import (
	"encoding/json"
	"net/http"
)

// Handler answers health checks.
func Handler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
}
` + "```" + `
[/CREATE_FILE]

[EDIT_FILE path="cmd/server/main.go"]
<<<<<<< SEARCH
	mux := http.NewServeMux()
=======
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", api.Handler)
>>>>>>> REPLACE
[/EDIT_FILE]

- [RUN_COMMAND timeout="120s"]
  go test ./...
  [/RUN_COMMAND]

That should do it.
`

// adversarial builds inputs of about the given size, each meant to make a
// careless parser rescan or allocate per line.
var adversarial = []struct {
	name string
	gen  func(size int) string
}{
	// Every line opens a block that never closes.
	{"unclosed", func(size int) string {
		return repeatTo("[CREATE_FILE path=\"a\"]\n[RUN_COMMAND]\n[MESSAGE]\n[EDIT_FILE path=\"b\"]\n[DONE]\n", size)
	}},
	// One unclosed file body swallowing command tags to the end.
	{"swallowing", func(size int) string {
		return "[CREATE_FILE path=\"a\"]\n" + repeatTo("[RUN_COMMAND]\n[/EDIT_FILE]\n", size)
	}},
	// Unknown and near-miss tags, with closers only at the very end.
	{"unknown", func(size int) string {
		return repeatTo("[WRITE_FILE path=\"x\"]\n[NOTE]\nprose\n[RUN]\n[SHELL]\n", size) + "[/SHELL]\n[/NOTE]\n"
	}},
	// A single unterminated tag line as long as the input.
	{"longline", func(size int) string {
		return "[CREATE_FILE path=\"" + strings.Repeat("a", size)
	}},
	// An unclosed reasoning section full of command tags.
	{"think", func(size int) string {
		return "<think>\n" + repeatTo("[DELETE_FILE path=\"x\"]\n<thinking>\n", size)
	}},
	// Fence lines inside a Markdown file, checked for wrapping.
	{"fences", func(size int) string {
		return "[CREATE_FILE path=\"a.md\"]\n```markdown\n" + repeatTo("```js\n```\n````\n", size) + "```\n[/CREATE_FILE]\n"
	}},
	// Search/replace markers that never complete a pair.
	{"markers", func(size int) string {
		return "[EDIT_FILE path=\"a\"]\n" + repeatTo("<<<<<<< SEARCH\n=======\n", size) + "[/EDIT_FILE]\n"
	}},
	// Self-closing tags each followed by many blank lines.
	{"blanks", func(size int) string {
		return repeatTo("[READ_FILE path=\"a\"]\n"+strings.Repeat("\n", 50), size)
	}},
	// Nothing but empty lines: the most lines for the bytes.
	{"newlines", func(size int) string {
		return "[MESSAGE]\nhi\n[/MESSAGE]\n" + strings.Repeat("\n", size)
	}},
	// The shortest lines that are not blank.
	{"shortlines", func(size int) string {
		return "[MESSAGE]\nhi\n[/MESSAGE]\n" + repeatTo("a\n", size)
	}},
	// Prose before any command, each line a would-be header echo.
	{"headers", func(size int) string {
		return repeatTo("**Note**: `see` _below_\n", size)
	}},
	// Tags hidden behind invisible characters and odd spaces.
	{"invisible", func(size int) string {
		return repeatTo("\u200b[NOTE]\n\u00a0- [x] done\n\ufeff[RUN_COMMAND\u200b]\n", size)
	}},
	// Markup in prose: every line has a '<'.
	{"html", func(size int) string {
		return repeatTo("<div>\n<p>text</p>\n</div>\n", size)
	}},
	// Markdown task lists: every line starts like a tag.
	{"tasks", func(size int) string {
		return repeatTo("- [ ] todo\n- [x] done\n1. [ ]\n", size)
	}},
}

// courierGC gives the collector the room courier gives it (GOGC 400, see
// tuneGC in cmd/courier) and returns what puts the setting back. It also
// keeps the heap's memory from going back to the system between parses:
// a virtual machine can charge more for faulting it in again than the
// parse costs. courier's soft limit on the heap is left out: what it does
// to a reply that holds more than the limit (slowed rather than given
// memory) is a choice about memory, not the parser's speed.
func courierGC() (restore func()) {
	old := debug.SetGCPercent(400)
	return func() { debug.SetGCPercent(old) }
}

// settle parses the texts, untimed, until the heap's resident memory has
// stopped growing (three rounds in a row without more, at most twenty
// rounds). Until then a parse also pays for faulting in pages, new ones or
// ones the runtime had given back to the system, and on a virtual machine
// that costs more than the parse: at 50 MB, a round that grew the heap
// took 270 ms and one that reused it 86 ms; the ordinary reply at 10 MB,
// run after the 1 MB inputs, measured 180-220 MB/s with one untimed round
// and 450-540 with the heap settled.
func settle(texts ...string) {
	var m runtime.MemStats
	resident := func() uint64 {
		runtime.ReadMemStats(&m)
		return m.HeapSys - m.HeapReleased
	}
	last, steady := resident(), 0
	for round := 0; round < 20 && steady < 3; round++ {
		for _, t := range texts {
			Parse(t)
		}
		if r := resident(); r > last {
			last, steady = r, 0
		} else {
			steady++
		}
	}
}

func repeatTo(unit string, size int) string {
	return strings.Repeat(unit, max(1, size/len(unit)))
}

func benchParse(b *testing.B, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	settle(text)
	for b.Loop() {
		Parse(text)
	}
}

func BenchmarkParse(b *testing.B) {
	defer courierGC()()
	for _, size := range benchSizes {
		mb := fmt.Sprintf("%dMB", size>>20)
		b.Run("ordinary/"+mb, func(b *testing.B) { benchParse(b, repeatTo(ordinaryReply, size)) })
		for _, a := range adversarial {
			b.Run(a.name+"/"+mb, func(b *testing.B) { benchParse(b, a.gen(size)) })
		}
	}
}

// BenchmarkParseRatio reports how many times longer each adversarial input
// takes per byte than the ordinary reply of the same size ("x-ordinary").
// Each round parses both, one right after the other, in turn first, after
// a collection outside the timing, so that each parse pays for its own
// garbage; the figure is the median of the rounds' ratios. Benchmarks run
// one after the other would compare moments seconds apart, and on a shared
// machine those differ more than the inputs do.
func BenchmarkParseRatio(b *testing.B) {
	defer courierGC()()
	for _, size := range benchSizes {
		mb := fmt.Sprintf("%dMB", size>>20)
		ordinary := repeatTo(ordinaryReply, size)
		for _, a := range adversarial {
			text := a.gen(size)
			b.Run(a.name+"/"+mb, func(b *testing.B) {
				timed := func(s string) float64 {
					runtime.GC()
					start := time.Now()
					Parse(s)
					return float64(time.Since(start)) / float64(len(s))
				}
				settle(ordinary, text)
				var ratios []float64
				for b.Loop() {
					var perByte, ordPerByte float64
					if len(ratios)%2 == 0 {
						ordPerByte, perByte = timed(ordinary), timed(text)
					} else {
						perByte, ordPerByte = timed(text), timed(ordinary)
					}
					ratios = append(ratios, perByte/ordPerByte)
				}
				slices.Sort(ratios)
				b.ReportMetric(ratios[len(ratios)/2], "x-ordinary")
			})
		}
	}
}
