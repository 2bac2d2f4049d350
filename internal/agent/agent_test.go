package agent

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewRunID(t *testing.T) {
	at := time.Date(2026, 2, 5, 15, 4, 5, 123_456_789, time.UTC)
	if got := NewRunID(at, 12345); got != "20260205-150405123-12345" {
		t.Errorf("NewRunID = %q, want 20260205-150405123-12345", got)
	}
	// Another zone gives the same id: ids sort by the instant.
	if got := NewRunID(at.In(time.FixedZone("x", 3600*5)), 7); got != "20260205-150405123-7" {
		t.Errorf("NewRunID in another zone = %q", got)
	}
	for _, id := range []string{"20260205-150405123-12345", "20260205-150405000-1"} {
		if !ValidRunID(id) {
			t.Errorf("ValidRunID(%q) = false", id)
		}
	}
	for _, id := range []string{"", "test-run", "20260205-150405-12345", "20260205-150405123-", "../20260205-150405123-1"} {
		if ValidRunID(id) {
			t.Errorf("ValidRunID(%q) = true", id)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	good := func() *RunContext {
		return &RunContext{RunID: "20260205-150405123-1", WorkingDir: dir,
			StdoutPath: filepath.Join(dir, "stdout"), StderrPath: filepath.Join(dir, "stderr")}
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("valid run context: %v", err)
	}
	tests := []struct {
		name   string
		change func(*RunContext)
		want   string
	}{
		{"no run id", func(rc *RunContext) { rc.RunID = "" }, "RunID is empty"},
		{"bad run id", func(rc *RunContext) { rc.RunID = "../x" }, "RunID"},
		{"no working dir", func(rc *RunContext) { rc.WorkingDir = "" }, "WorkingDir is empty"},
		{"relative working dir", func(rc *RunContext) { rc.WorkingDir = "ws" }, "WorkingDir \"ws\" is not an absolute path"},
		{"missing working dir", func(rc *RunContext) { rc.WorkingDir = filepath.Join(dir, "none") }, "WorkingDir"},
		{"working dir is a file", func(rc *RunContext) { rc.WorkingDir = file }, "is not a folder"},
		{"no stdout", func(rc *RunContext) { rc.StdoutPath = "" }, "StdoutPath is empty"},
		{"relative stdout", func(rc *RunContext) { rc.StdoutPath = "out" }, "StdoutPath \"out\" is not an absolute path"},
		{"no stderr", func(rc *RunContext) { rc.StderrPath = "" }, "StderrPath is empty"},
		{"same file", func(rc *RunContext) { rc.StderrPath = rc.StdoutPath }, "same file"},
	}
	for _, tt := range tests {
		rc := good()
		tt.change(rc)
		err := rc.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want an error with %q", tt.name, err, tt.want)
		}
	}
	var nilCtx *RunContext
	if err := nilCtx.Validate(); err == nil {
		t.Error("Validate of a nil run context passed")
	}
}

// TestExecuteValidatesFirst checks that each backend refuses a bad run
// context before creating any file or running anything.
func TestExecuteValidatesFirst(t *testing.T) {
	dir := t.TempDir()
	agents := []Agent{
		commandAgentT(t),
		mustNew(t, Spec{Name: NameOpenAI, Model: "m", BaseURL: "http://127.0.0.1:1/v1"}),
	}
	for _, a := range agents {
		rc := &RunContext{RunID: "20260205-150405123-1", WorkingDir: dir, StdoutPath: filepath.Join(dir, "out")}
		err := a.Execute(t.Context(), rc)
		if err == nil || !strings.Contains(err.Error(), "StderrPath is empty") {
			t.Errorf("%s: Execute = %v, want the StderrPath error", a.Type(), err)
		}
		if _, err := os.Stat(rc.StdoutPath); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: Execute created stdout before validating", a.Type())
		}
	}
}

func mustNew(t *testing.T, spec Spec) Agent {
	t.Helper()
	a, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"llm -m gpt-4o", []string{"llm", "-m", "gpt-4o"}},
		{"  ollama   run  qwen2.5-coder:7b ", []string{"ollama", "run", "qwen2.5-coder:7b"}},
		{`claude -p --tools ""`, []string{"claude", "-p", "--tools", ""}},
		{`aichat --no-stream 'two words' "and \"quoted\" \$HOME"`, []string{"aichat", "--no-stream", "two words", `and "quoted" $HOME`}},
		{`prog it\'s a\ b 'it'\''s'`, []string{"prog", "it's", "a b", "it's"}},
		{`prog "$" 'x$y' # a comment`, []string{"prog", "$", "x$y"}},
		{`/opt/my agent/run.sh`, []string{"/opt/my", "agent/run.sh"}},
		{`"/opt/my agent/run.sh" --flag=a,b`, []string{"/opt/my agent/run.sh", "--flag=a,b"}},
		{`prog {x} "{a,b}" a\
b "a\\b"`, []string{"prog", "{x}", "{a,b}", "ab", `a\b`}},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.line)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
	refused := []struct{ line, want string }{
		{"", "empty"},
		{"   # just a comment", "empty"},
		{"llm -m x | tee log", "a pipe"},
		{"llm; rm -rf ~", "several commands"},
		{"llm && echo done", "a command list"},
		{"llm &", "a background job"},
		{"llm > out.txt", "a redirection"},
		{"llm < prompt.txt", "a redirection"},
		{"llm $(cat model)", "a command substitution"},
		{"llm `cat model`", "a command substitution"},
		{"llm -m $MODEL", "a variable"},
		{`llm -m "$MODEL"`, "a variable"},
		{"MODEL=x llm", "a variable assignment"},
		{"llm *.txt", "a glob"},
		{"llm -m {a,b}", "a brace expansion"},
		{"~/bin/agent", "a ~"},
		{"(llm)", "a group"},
		{"llm 'unterminated", "agent command"},
		{`"" -x`, "starts with an empty word"},
	}
	for _, tt := range refused {
		got, err := SplitCommand(tt.line)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want an error with %q", tt.line, got, err, tt.want)
		}
	}
	_, err := SplitCommand("llm | sh")
	if err == nil || !strings.Contains(err.Error(), "never through a shell") {
		t.Errorf("the refusal does not say why: %v", err)
	}
}

func TestCleanLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain error", "plain error"},
		{"  two\n\nlines\t here ", "two lines here"},
		{"\x1b[31mred\x1b[0m text", "red text"},
		{"bell\a and \x1b]0;title\a", `bell\x07 and ]0;title\x07`},
		{"bad \xff byte", `bad \xff byte`},
		{"bidi \u202e txt.exe", `bidi \u202e txt.exe`},
		{"line\u2028sep\u0085x", "line sep x"},
		{"courier: error: fake\rcourier: hint: forged", "courier: error: fake courier: hint: forged"},
	}
	for _, tt := range tests {
		if got := cleanLine(tt.in); got != tt.want {
			t.Errorf("cleanLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := cleanLine(strings.Repeat("x", 1000)); got != strings.Repeat("x", detailMax)+" …" {
		t.Errorf("cleanLine keeps %d bytes, want %d characters and an ellipsis", len(got), detailMax)
	}
}

// TestRedactorSplitWrites feeds a secret split across writes at every
// point and checks it never reaches the output.
func TestRedactorSplitWrites(t *testing.T) {
	secret := "sk-live-0123456789abcdef"
	text := "before " + secret + " middle " + secret + secret + " after s"
	for cut := 0; cut <= len(text); cut++ {
		var out bytes.Buffer
		r := newRedactor(&out, []string{secret, "other-secret-value"})
		for _, part := range []string{text[:cut], text[cut:]} {
			if _, err := r.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		want := "before [redacted] middle [redacted][redacted] after s"
		if out.String() != want {
			t.Fatalf("cut at %d: %q, want %q", cut, out.String(), want)
		}
	}
	// Byte by byte.
	var out bytes.Buffer
	r := newRedactor(&out, []string{secret})
	for i := range len(text) {
		r.Write([]byte{text[i]})
	}
	r.Close()
	if strings.Contains(out.String(), secret) || !strings.HasSuffix(out.String(), " after s") {
		t.Errorf("byte by byte: %q", out.String())
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true}, // in the past: now
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoffGrowsWithJitterUpToTheCap(t *testing.T) {
	o := HTTPOptions{Backoff: 100 * time.Millisecond, MaxBackoff: time.Second}.withDefaults()
	for n, full := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 9: time.Second} {
		for range 50 {
			got := o.backoff(n)
			if got < full/2 || got > full {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n, got, full/2, full)
			}
		}
	}
}

func TestNormalizeBaseURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://localhost:11434/v1", "http://localhost:11434/v1"},
		{"http://localhost:11434/v1/", "http://localhost:11434/v1"},
		{"https://openrouter.ai/api/v1/chat/completions", "https://openrouter.ai/api/v1"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
	}
	for _, tt := range tests {
		got, err := NormalizeBaseURL(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeBaseURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"localhost:11434", "ftp://x/v1", "http://", "http://user:pw@host/v1"} {
		if _, err := NormalizeBaseURL(bad); err == nil {
			t.Errorf("NormalizeBaseURL(%q) accepted it", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("NormalizeBaseURL error shows the password: %v", err)
		}
	}
}

func TestSSEReader(t *testing.T) {
	stream := ": hello\r\n\r\nevent: message\nid: 1\ndata: {\"a\":1}\n\ndata:{\"b\":2}\r\n\r\ndata: one\ndata: two\n\nretry: 10\n\ndata: [DONE]\n\ndata: tail"
	s := newSSEReader(strings.NewReader(stream))
	var got []string
	for {
		d, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	want := []string{`{"a":1}`, `{"b":2}`, "one\ntwo", "[DONE]", "tail"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	long := "data: " + strings.Repeat("x", maxSSELine+10) + "\n\n"
	if _, err := newSSEReader(strings.NewReader(long)).next(); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("an endless line: %v", err)
	}
}

// TestDecodeChunks reads the shapes servers send: one chunk an event,
// several when a server leaves out the blank lines between events, and a
// content given as a list of parts.
func TestDecodeChunks(t *testing.T) {
	tests := []struct {
		data string
		want []string
	}{
		{`{"choices":[{"delta":{"content":"a"}}]}`, []string{"a"}},
		{`{"choices":[{"delta":{"content":"a"}}]}` + "\n" + `{"choices":[{"delta":{"content":"b"}}]}`, []string{"a", "b"}},
		{`{"choices":[{"delta":{"content":[{"type":"text","text":"x"},{"type":"image_url"},{"type":"text","text":"y"}]}}]}`, []string{"xy"}},
		{`{"choices":[{"delta":{"content":null,"reasoning_content":"hmm"}}]}`, []string{""}},
	}
	for _, tt := range tests {
		chunks, err := decodeChunks(tt.data)
		if err != nil {
			t.Errorf("decodeChunks(%s): %v", tt.data, err)
			continue
		}
		var got []string
		for _, c := range chunks {
			got = append(got, string(c.Choices[0].Delta.Content))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("decodeChunks(%s) = %q, want %q", tt.data, got, tt.want)
		}
	}
	if _, err := decodeChunks(`{"choices": [`); err == nil || !strings.Contains(err.Error(), "not a chat completion chunk") {
		t.Errorf("broken JSON: %v", err)
	}
}

// fixOf is what a *SetupError says to change, or "".
func fixOf(err error) string {
	var se *SetupError
	if errors.As(err, &se) {
		return se.Fix
	}
	return ""
}
