package protocol

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// The parser is linear in time and memory on any input. These benchmarks
// parse an ordinary reply and adversarial ones of the largest size a reply
// may have (20 MB); make bench holds them to their floors: the ordinary
// reply within 0.5 s, the worst adversarial input at most 3x slower.
// BenchmarkParseRatio times each adversarial input and the ordinary reply
// in alternation, so that both of a pair see the same machine.

// benchSize is the size of the inputs: the default largest reply.
const benchSize = 20 << 20

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
	// The ordinary reply as copied from the rendered chat page: chrome to
	// leave out at each block's edges, tags with Markdown escapes.
	{"rendered", func(size int) string {
		r := strings.NewReplacer("```go\n", "go\nCopy code\n", "```\n[/", "Use code with caution.\nGo\n[/",
			"[CREATE_FILE", "\\[CREATE\\_FILE", "[EDIT_FILE", "\\[EDIT\\_FILE", "\"]", "\"\\]",
			"[/CREATE_FILE]", "\\[/CREATE\\_FILE\\]",
			"[RUN_COMMAND timeout=\"120s\"]\n", "[RUN_COMMAND timeout=\"120s\"]\n  bash\n  Copy\n  Edit\n")
		return repeatTo(r.Replace(ordinaryReply), size)
	}},
	// Prose with near tags and no command: the whole reply is looked
	// through for a mangled one.
	{"mangled", func(size int) string {
		return repeatTo("see [RUN_COMMAN\\_ and [CREATE\\_FIL](x)\n", size)
	}},
	// Markdown task lists: every line starts like a tag.
	{"tasks", func(size int) string {
		return repeatTo("- [ ] todo\n- [x] done\n1. [ ]\n", size)
	}},
}

func repeatTo(unit string, size int) string {
	return strings.Repeat(unit, max(1, size/len(unit)))
}

func benchParse(b *testing.B, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(text)
	}
}

func BenchmarkParse(b *testing.B) {
	b.Run("ordinary", func(b *testing.B) { benchParse(b, repeatTo(ordinaryReply, benchSize)) })
	for _, a := range adversarial {
		b.Run(a.name, func(b *testing.B) { benchParse(b, a.gen(benchSize)) })
	}
}

// BenchmarkParseRatio reports how many times longer each adversarial input
// takes per byte than the ordinary reply ("x-ordinary"). Each round parses
// both, one right after the other, in turn first, after a collection
// outside the timing, so that each parse pays for its own garbage; the
// figure is the median of the rounds' ratios.
func BenchmarkParseRatio(b *testing.B) {
	ordinary := repeatTo(ordinaryReply, benchSize)
	for _, a := range adversarial {
		text := a.gen(benchSize)
		b.Run(a.name, func(b *testing.B) {
			timed := func(s string) float64 {
				runtime.GC()
				start := time.Now()
				Parse(s)
				return float64(time.Since(start)) / float64(len(s))
			}
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
