package agentspaces

import (
	"fmt"
	"strings"
	"testing"
)

// Reading a reply or a message is linear in time and memory whatever it
// holds. These benchmarks read an ordinary reply and hostile ones of the
// same size; run them with
//
//	go test -run '^$' -bench . -benchmem -benchtime 3x ./internal/agentspaces/
//
// MB/s must stay roughly flat from 1 MB to 10 MB, and hostile inputs
// within a small factor of ordinary ones.
//
// Measured with -benchtime 3x on a shared 2-core linux/amd64 machine
// under heavy load from other work (MB/s, noisy by a factor of two
// between runs; bytes allocated per input byte at 10 MB):
//
//	input            1 MB   10 MB   B/byte
//	ordinary        14-30   15-35      5.5  (a 5 KB file, an edit, a run, a message per 5.6 KB)
//	bigfile         17-34   18-57      7    (one createFile of 10 MB with escapes)
//	braces          42-150  60-120     0    ("{" repeated)
//	keys           110-175 115-120     0.1  ({"a":{"a":... nested past the depth limit)
//	unclosed        11-36   38-48     10    ({"operations":[ repeated, never closed)
//	brokenmessages 100     64-180      7    (a broken message per line; 100 reported)
//	invalidops      14-22   85-115     2    (messages of 10000 invalid operations; one runs)
//	comments        70-80   78        11    (/* and // everywhere inside a message)
//	quotes          15-25   24-46      4    (a string that never ends, full of escapes)
//	deep           170-280  >4000      0.2  ([[[[ inside a message, past the depth limit)
//	prose          >10000  >10000      0    (text with no JSON object)
//	Decode          20-48   30-57      5.5  (the ordinary input as one program's message)
//
// Time per byte stays flat or improves from 1 MB to 10 MB for every input:
// nothing is rescanned per candidate object. Memory follows the input's
// size and the operations kept (at most MaxOperations per reply), never the
// number of braces, comments or broken messages.
func BenchmarkParseReply(b *testing.B) {
	for _, in := range benchInputs() {
		for _, size := range []int{1 << 20, 10 << 20} {
			text := in.make(size)
			b.Run(fmt.Sprintf("%s/%dMB", in.name, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					ParseReply(text)
				}
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		data := []byte(ordinaryMessage(size))
		b.Run(fmt.Sprintf("ordinary/%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type benchInput struct {
	name string
	make func(size int) string
}

// repeatTo repeats unit until the text is about size bytes.
func repeatTo(unit string, size int) string {
	return strings.Repeat(unit, max(1, size/len(unit)))
}

// ordinaryOps is a typical turn: a message, a file of about 5 KB, an edit
// and a test run. Repeated to 10 MB it stays under MaxOperations.
var ordinaryOps = `    {"type": "message", "content": "Now the handler and its test."},
    {"type": "createFile", "id": "f1", "path": "internal/api/handler.go", "content": "package api\n\nimport \"net/http\"\n\n` +
	strings.Repeat(`// Handler answers health checks with a short JSON body.\nfunc Handler(w http.ResponseWriter, r *http.Request) {\n\tw.Header().Set(\"Content-Type\", \"application/json\")\n\tw.WriteHeader(http.StatusOK)\n}\n\n`, 30) + `"},
    {"type": "editFile", "id": "e1", "path": "cmd/server/main.go", "edits": [{"oldContent": "mux.HandleFunc(\"/\", index)", "newContent": "mux.HandleFunc(\"/\", index)\n\tmux.HandleFunc(\"/health\", api.Handler)"}]},
    {"type": "shell", "id": "s1", "command": "go test ./...", "timeout": 120000},
`

func ordinaryMessage(size int) string {
	ops := repeatTo(ordinaryOps, size)
	return "{\n  \"protocolVersion\": \"1.0\",\n  \"operations\": [\n" + ops + "    {\"type\": \"readFile\", \"path\": \"go.mod\"}\n  ]\n}\n"
}

func benchInputs() []benchInput {
	return []benchInput{
		{"ordinary", func(n int) string {
			return "I'll add the handler and run the tests.\n\n```json\n" + ordinaryMessage(n) + "```\n\nAfter that I will check coverage.\n"
		}},
		{"bigfile", func(n int) string {
			return `{"protocolVersion": "1.0", "operations": [{"type": "createFile", "path": "data.txt", "content": "` +
				repeatTo(`line of data \"quoted\" \\ and more\n`, n) + `"}]}`
		}},
		{"braces", func(n int) string { return repeatTo("{", n) }},
		{"keys", func(n int) string { return repeatTo(`{"a":`, n) }},
		{"unclosed", func(n int) string { return repeatTo(`{"operations":[`, n) }},
		{"brokenmessages", func(n int) string { return repeatTo("{\"operations\": [}\n", n) }},
		{"invalidops", func(n int) string {
			// Many messages of the most operations allowed, all invalid.
			msg := `{"operations": [` + strings.Repeat(`{"type": "x"},`, MaxOperations-1) + `{"type": "x"}]}` + "\n"
			return repeatTo(msg, n)
		}},
		{"comments", func(n int) string { return `{"operations": [` + repeatTo("/* { */ // }\n", n) + `]}` }},
		{"quotes", func(n int) string { return `{"operations": "` + repeatTo(`\"{[\\`, n) }},
		{"deep", func(n int) string { return `{"operations": ` + repeatTo("[", n) }},
		{"prose", func(n int) string {
			return repeatTo("Some prose about code, with \"quotes\" and f(x) [1] but no objects.\n", n)
		}},
	}
}
