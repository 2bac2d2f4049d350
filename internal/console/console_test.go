package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/syncbuf"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
)

var question = runner.Question{Session: "a1b2c3d4", Sequence: 1, Command: "rm -rf build", Reason: "`rm -rf build` needs approval: recursive or forced delete"}

func TestTerminalAnswers(t *testing.T) {
	tests := []struct {
		input  string
		wait   runner.Answer
		want   runner.Answer
		reason string
	}{
		{"y\n", runner.Later, runner.Approve, ""},
		{"YES\n", runner.Later, runner.Approve, ""},
		{"a\n", runner.Later, runner.ApproveAll, ""},
		{"n\nit deletes my cache\n", runner.Later, runner.Deny, "it deletes my cache"},
		{"no\n\n", runner.Later, runner.Deny, ""},
		{"maybe\ny\n", runner.Later, runner.Approve, ""},
		{"w\n", runner.Later, runner.Later, ""},
		{"w\n", runner.Stop, runner.Stop, ""},
		{"", runner.Later, runner.Stop, ""}, // end of input: leave the question open, never run
	}
	for _, tt := range tests {
		var out bytes.Buffer
		a := NewTerminal(strings.NewReader(tt.input), &out, tt.wait)
		d, err := a.Approve(context.Background(), question)
		if err != nil || d.Answer != tt.want || d.Reason != tt.reason {
			t.Errorf("input %q: got %+v %v, want %v %q", tt.input, d, err, tt.want, tt.reason)
		}
		if !strings.Contains(out.String(), "    │ rm -rf build\n") || !strings.Contains(out.String(), question.Reason) {
			t.Errorf("input %q: the question does not show the command and the reason:\n%s", tt.input, out.String())
		}
	}
}

// A command cannot disguise itself at the question: every line is shown,
// marked as the command's, with control characters visible, and so are
// the variables it is given besides its text.
func TestTerminalShowsTheWholeCommandSafely(t *testing.T) {
	q := question
	q.Command = "npm test\x1b[1A\x1b[2K\rRun it? \x1b]52;c;ZXZpbA==\x07\nrm -rf important_dir\u202e"
	q.Env = "GIT_CONFIG_COUNT=1 GIT_CONFIG_VALUE_0='sh x.sh' X=$'\\x1b'\x1b[2K"
	var out bytes.Buffer
	a := NewTerminal(strings.NewReader("n\n\n"), &out, runner.Stop)
	if _, err := a.Approve(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\r\x07") || strings.Contains(got, "\u202e") {
		t.Errorf("the question holds raw control characters: %q", got)
	}
	for _, want := range []string{"    with the variables GIT_CONFIG_COUNT=1 GIT_CONFIG_VALUE_0='sh x.sh' X=$'\\x1b'\\x1b[2K\n", `    │ npm test\x1b[1A\x1b[2K\rRun it? \x1b]52;c;ZXZpbA==\x07` + "\n", "    │ rm -rf important_dir\\u202e\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("question lacks %q:\n%s", want, got)
		}
	}
}

// Ctrl-C at the question returns at once, and a line typed later is not
// lost for the next question.
func TestTerminalCanceled(t *testing.T) {
	r, w := io.Pipe()
	a := NewTerminal(r, io.Discard, runner.Later)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.Approve(ctx, question)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Approve after cancel = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Approve did not return after its context was canceled")
	}
	go w.Write([]byte("y\n"))
	d, err := a.Approve(context.Background(), question)
	if err != nil || d.Answer != runner.Approve {
		t.Errorf("the next question got %+v, %v", d, err)
	}
}

// The budget warning names what makes a request large and how to shrink it.
func TestBudgetAdvice(t *testing.T) {
	big := strings.Repeat("   1 | some code line\n", 4000)
	text, parts := protocol.Tags{}.Render(frontend.Request{Session: "a1b2c3d4", Sequence: 2, Task: "t",
		Results:   []command.Result{},
		Requested: []frontend.FileContent{{Path: "src/big.go", Text: big}}})
	advice := budgetAdvice(parts, int64(len(text)))
	if !strings.HasPrefix(advice, "the largest parts are file src/big.go ") || !strings.Contains(advice, `lines="A-B"`) {
		t.Errorf("advice = %q", advice)
	}

	// In a JSON request, what the last operations read and printed is in
	// the events, not in the workspace listing above them.
	code := 0
	text, parts = agentspaces.Chat{}.Render(frontend.Request{Session: "a1b2c3d4", Sequence: 2, Task: "t", ReadLines: 500,
		Commands: []command.Command{{Type: command.RunCommand, Command: "cat log", SplitOutput: true}},
		Results:  []command.Result{{Type: command.RunCommand, Status: command.OK, Stdout: big, ExitCode: &code}}})
	advice = budgetAdvice(parts, int64(len(text)))
	if !strings.HasPrefix(advice, "the largest parts are Events of your last operations ") || !strings.Contains(advice, "read_lines") {
		t.Errorf("advice for a JSON request = %q", advice)
	}
}

// Text from a reply reaches the terminal made safe, and counts are worded
// for people.
func TestTextReporter(t *testing.T) {
	var out, errw bytes.Buffer
	r := NewText(Options{Out: &out, Err: &errw, Root: "/root"})
	code := 0
	msg := command.Command{Type: command.Message, Text: "hello\x1b]0;pwned\x07"}
	run := command.Command{Type: command.RunCommand, Command: "echo \x1b[2Khi"}
	r.CommandFinished(runner.CommandFinished{Command: msg, Result: command.Result{Type: command.Message, Status: command.OK}})
	r.CommandFinished(runner.CommandFinished{Command: run, Result: command.Result{Type: command.RunCommand, Status: command.OK, ExitCode: &code}})
	r.TurnEnded(runner.TurnEnded{Session: "a1b2c3d4", Sequence: 1, Commands: []command.Command{run},
		Results: []command.Result{{Type: command.RunCommand, Status: command.OK, ExitCode: &code}}})
	got := out.String()
	if strings.Contains(got, "\x1b") || strings.Contains(got, "\x07") {
		t.Errorf("raw control characters reached the terminal: %q", got)
	}
	for _, want := range []string{`MESSAGE hello\x1b]0;pwned\x07`, `✓ RUN_COMMAND echo \x1b[2Khi  exit 0`, "1 command: 1 ok\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// The JSON reporter writes one object per line and event.
func TestJSONReporter(t *testing.T) {
	var out bytes.Buffer
	r := NewJSON(&out)
	code := 0
	run := command.Command{Type: command.RunCommand, Command: "go test"}
	res := command.Result{Type: command.RunCommand, Status: command.OK, ExitCode: &code, Summary: "Ran 'go test' (exit code 0)"}
	r.ReplyTaken(runner.ReplyTaken{Session: "a1b2c3d4", Sequence: 1, Name: "r.txt"})
	r.CommandStarted(runner.CommandStarted{Index: 0, Command: run})
	r.CommandFinished(runner.CommandFinished{Index: 0, Command: run, Result: res})
	r.ApprovalNeeded(runner.ApprovalNeeded{Session: "a1b2c3d4", Sequence: 1, Index: 1, Command: "rm -rf x", Reason: "r"})
	r.RequestWritten(runner.RequestWritten{Session: "a1b2c3d4", Sequence: 2, Path: "/x/outbox/a1b2c3d4_seq0002.txt", Text: "abcd", Tokens: 1})
	r.TurnEnded(runner.TurnEnded{Session: "a1b2c3d4", Sequence: 2, Results: []command.Result{res}, Complete: true, Summary: "done"})
	r.TurnUndone(runner.TurnUndone{Session: "a1b2c3d4", Report: runner.UndoReport{Sequence: 1, Restored: []string{"main.go"}, Removed: []string{"new.go"}}})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"replyTaken", "commandStarted", "commandFinished", "approvalNeeded", "requestWritten", "turnEnded", "sessionComplete", "turnUndone"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i+1, err, l)
		}
		if m["event"] != want[i] {
			t.Errorf("line %d is %v, want %s", i+1, m["event"], want[i])
		}
	}
	if !strings.Contains(lines[2], `"exitCode":0`) || !strings.Contains(lines[4], `"tokens":1`) ||
		!strings.Contains(lines[7], `"restored":["main.go"],"removed":["new.go"]`) {
		t.Errorf("fields missing:\n%s", out.String())
	}
}

// TestAgentRunProgress: on a terminal, the progress line of an agent's run
// names the agent and its model and shows what has arrived as it arrives;
// the run's last line says what it answered.
func TestAgentRunProgress(t *testing.T) {
	var out bytes.Buffer
	var errw syncbuf.Buffer
	tx := NewText(Options{Out: &out, Err: &errw, Progress: true})
	tx.progress.delay, tx.progress.every = 0, 20*time.Millisecond
	run := runner.AgentRun{RunID: "20260101-120000000-42", Agent: "claude", Model: "sonnet"}
	ev := func(kind runner.RunKind, bytes int64, tokens int) runner.AgentRun {
		e := run
		e.Kind, e.Bytes, e.Tokens, e.Elapsed = kind, bytes, tokens, 1500*time.Millisecond
		return e
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(errw.String(), want) {
			if time.Now().After(deadline) {
				got := errw.String()
				t.Fatalf("the progress line never showed %q; it ends with:\n%q", want, got[max(0, len(got)-300):])
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	tx.AgentRun(ev(runner.RunStarted, 0, 0))
	waitFor("claude (sonnet) is answering")
	tx.AgentRun(ev(runner.RunProgress, 2048, 0))
	waitFor("s  2.0 KB")
	tx.AgentRun(ev(runner.RunProgress, 3<<20, 812))
	waitFor("3.0 MB, 812 tokens")
	tx.AgentRun(ev(runner.RunEnded, 3<<20, 812))
	if !strings.HasSuffix(errw.String(), "\r\x1b[K") {
		t.Errorf("the progress line is not cleared at the end: %q", errw.String())
	}
	if want := "  claude (sonnet) answered in 1.5s: 3.0 MB, 812 tokens\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("stdout %q, want it to end with %q", out.String(), want)
	}
}
