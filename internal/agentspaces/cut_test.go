package agentspaces

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
)

// requestEvents renders a chat request whose last turn read one file and
// ran one command, and returns the request and its events message.
func requestEvents(t *testing.T, read command.Result, readLines int) (string, EventsMessage) {
	t.Helper()
	req := frontend.Request{
		Session: "abcd1234", Sequence: 2, Task: "read it", ReadLines: readLines,
		Commands: []command.Command{
			{Type: command.ReadFile, ID: "r1", Path: read.Path, Inline: true},
			{Type: command.RunCommand, ID: "s1", Command: "echo hi", SplitOutput: true},
		},
		Results: []command.Result{read, {Type: command.RunCommand, Status: command.OK, Stdout: "hi\n", ExitCode: new(int)}},
	}
	text, _ := Chat{}.Render(req)
	at := strings.Index(text, "## Events of your last operations\n")
	start := strings.Index(text[max(at, 0):], "```json\n") + max(at, 0)
	end := strings.LastIndex(text, "```\n")
	if start < 0 || end <= start {
		t.Fatalf("no events in the request:\n%.2000s", text)
	}
	var m EventsMessage
	if err := json.Unmarshal([]byte(text[start+len("```json\n"):end]), &m); err != nil {
		t.Fatalf("the events are not JSON: %v", err)
	}
	if len(m.Events) != 2 || m.Events[0].Type != EventReadFile {
		t.Fatalf("events %+v", m.Events)
	}
	return text, m
}

// A 1 MB file read with readFile shows in the next chat request as the tag
// protocol shows a READ_FILE: read_lines lines, with a note saying what was
// left out and how to read it.
func TestChatRequestCutsReadFileContent(t *testing.T) {
	var b strings.Builder
	for i := 1; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "line %d of a long log file, with some words to make it longer\n", i)
	}
	content := b.String()
	lines := strings.Count(content, "\n")
	read := command.Result{Type: command.ReadFile, Path: "logs/big.log", Status: command.OK, Content: content, Size: int64(len(content))}

	text, m := requestEvents(t, read, 500)
	if len(text) > 64<<10 {
		t.Errorf("the request is %d bytes", len(text))
	}
	e := m.Events[0]
	if got := strings.Count(e.Content, "\n"); got != 500 || !strings.HasPrefix(content, e.Content) {
		t.Errorf("the content shows %d lines; want the first 500", got)
	}
	for _, want := range []string{"lines 1-500 of " + fmtThousands(lines), "read_lines", "sed -n '501,1000p' logs/big.log"} {
		if !strings.Contains(e.Note, want) {
			t.Errorf("the note does not say %q: %s", want, e.Note)
		}
	}
	if e.Size != int64(len(content)) {
		t.Errorf("size %d; the file has %d bytes", e.Size, len(content))
	}

	// A minified file of one line is cut within the line.
	one := strings.Repeat("x", 1<<20)
	_, m = requestEvents(t, command.Result{Type: command.ReadFile, Path: "app.min.js", Status: command.OK, Content: one, Size: 1 << 20}, 500)
	e = m.Events[0]
	if len(e.Content) > 2100 || !strings.HasPrefix(e.Content, strings.Repeat("x", 2000)+" [... courier cut this line: 1,046,576 more characters]") {
		t.Errorf("one long line: %.200q (%d bytes)", e.Content, len(e.Content))
	}
	if !strings.Contains(e.Note, "1 line longer than 2,000 characters") {
		t.Errorf("note %q", e.Note)
	}

	// Binary content is cut to whole bytes of base64.
	data := make([]byte, 40000)
	enc := base64.StdEncoding.EncodeToString(data)
	_, m = requestEvents(t, command.Result{Type: command.ReadFile, Path: "a b.bin", Status: command.OK, Content: enc, Encoding: command.Base64, Size: 40000}, 500)
	e = m.Events[0]
	if dec, err := base64.StdEncoding.DecodeString(e.Content); err != nil || len(dec) != 1500 {
		t.Errorf("base64 cut: %d bytes, %v", len(dec), err)
	}
	if !strings.Contains(e.Note, "first 1,500 of the file's 40,000 bytes") || !strings.Contains(e.Note, "'a b.bin'") {
		t.Errorf("note %q", e.Note)
	}

	// A small file is shown whole, with no note.
	_, m = requestEvents(t, command.Result{Type: command.ReadFile, Path: "a.txt", Status: command.OK, Content: "a\nb\n", Size: 4}, 500)
	if e := m.Events[0]; e.Content != "a\nb\n" || e.Note != "" {
		t.Errorf("small file: %q, note %q", e.Content, e.Note)
	}
}

// A program's events are never cut: they carry the whole file, up to the
// protocol's 10 MB.
func TestProgramEventsKeepReadFileContent(t *testing.T) {
	content := strings.Repeat("a line\n", 100000)
	cmds := []command.Command{{Type: command.ReadFile, Path: "big.txt", Inline: true}}
	res := []command.Result{{Type: command.ReadFile, Path: "big.txt", Status: command.OK, Content: content, Size: int64(len(content))}}
	m := Events("run", Outcome{Commands: cmds, Results: res}, time.Now())
	text, err := FormatEvents(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, `"note"`) || m.Events[0].Content != content {
		t.Error("a program's readFile event was shortened")
	}
}

func fmtThousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// The file contents of a chat request's readFile events take at most
// ReadBytes (token_budget) together: a reply of 200 reads of a 100 KB file
// gives a request of about that much and the 200 events, the first read cut
// by room with a note saying so, the others left out with a note saying to
// read again.
func TestChatRequestBoundsReadFileContent(t *testing.T) {
	var b strings.Builder
	for i := 1; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, "line %d of a long log file\n", i)
	}
	read := command.Result{Type: command.ReadFile, Path: "big.log", Status: command.OK, Content: b.String(), Size: int64(b.Len())}
	req := frontend.Request{Session: "abcd1234", Sequence: 2, Task: "read it", ReadLines: 500, ReadBytes: 8 << 10}
	for range 200 {
		req.Commands = append(req.Commands, command.Command{Type: command.ReadFile, Path: "big.log", Inline: true})
		req.Results = append(req.Results, read)
	}
	text, _ := Chat{}.Render(req)
	if len(text) > 8<<10+200*500+16<<10 {
		t.Errorf("the request is %d bytes", len(text))
	}
	if n := strings.Count(text, "line 1 of a long log file"); n != 1 {
		t.Errorf("the file's first line is in the request %d times", n)
	}
	if !strings.Contains(text, "(what this request may show of files, the token_budget setting); readFile has no line range") {
		t.Error("the first read's note does not say the room cut it")
	}
	if n := strings.Count(text, `"note": "Left out for room: the readFile events before this one fill what this request may show of files (the token_budget setting); readFile it again in a later reply."`); n != 199 {
		t.Errorf("%d reads are said to be left out; want 199", n)
	}
}
