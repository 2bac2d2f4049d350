package cli

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/protocol"
)

// Every command a person can run shows an example in its --help.
func TestEveryCommandHasAnExample(t *testing.T) {
	root := newRoot(&IO{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden && c.Name() != "help" && c.Name() != "completion" && c.Example == "" {
			t.Errorf("'%s' has no example in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func TestAskApproval(t *testing.T) {
	c := command.Command{Type: command.RunCommand, Command: "rm -rf build"}
	v := policy.Verdict{Decision: policy.Ask, Reason: "`rm -rf build` needs approval: recursive or forced delete"}
	tests := []struct {
		input  string
		want   engine.Answer
		reason string
	}{
		{"y\n", engine.Approve, ""},
		{"YES\n", engine.Approve, ""},
		{"a\n", engine.ApproveAll, ""},
		{"n\nit deletes my cache\n", engine.Reject, "it deletes my cache"},
		{"no\n\n", engine.Reject, ""},
		{"maybe\ny\n", engine.Approve, ""},
		{"w\n", engine.Wait, ""},
		{"", engine.Wait, ""}, // end of input: decide later, never run
	}
	for _, tt := range tests {
		var out bytes.Buffer
		got, reason, err := askApproval(&out, bufio.NewReader(strings.NewReader(tt.input)), c, v)
		if err != nil || got != tt.want || reason != tt.reason {
			t.Errorf("input %q: got %v %q %v, want %v %q", tt.input, got, reason, err, tt.want, tt.reason)
		}
		if !strings.Contains(out.String(), "    │ rm -rf build\n    └ end of the command (1 line)\nRun it?") || !strings.Contains(out.String(), v.Reason) {
			t.Errorf("input %q: the question does not show the command and the reason:\n%s", tt.input, out.String())
		}
	}
}

// A command that tries to rewrite the question on the terminal is shown
// whole, every line behind the bar, with its escapes visible, and nothing
// it holds can pass for courier's own lines.
func TestAskApprovalShowsAHostileCommandAsItIs(t *testing.T) {
	cmd := "rm -rf important_dir\r\x1b[1A\x1b[2K\x1b]0;npm test\x07npm test\n" +
		"\x1b]52;c;cm0gLXJmIH4=\x07echo done\n" +
		"    └ end of the command (1 line)\n" +
		"Run it? [y]es\u202e"
	c := command.Command{Type: command.RunCommand, Command: cmd}
	v := policy.Verdict{Decision: policy.Ask, Reason: "`rm -rf important_dir\x1b[2K` needs approval: recursive or forced delete"}
	var out bytes.Buffer
	if _, _, err := askApproval(&out, bufio.NewReader(strings.NewReader("n\n\n")), c, v); err != nil {
		t.Fatal(err)
	}
	shown := out.String()
	if strings.ContainsAny(shown, "\x1b\r\x07\u202e") {
		t.Fatalf("the question holds raw control characters:\n%q", shown)
	}
	want := "\ncourier: this command needs your approval: `rm -rf important_dir\\x1b[2K` needs approval: recursive or forced delete\n" +
		"    │ rm -rf important_dir\\r\\x1b[1A\\x1b[2K\\x1b]0;npm test\\x07npm test\n" +
		"    │ \\x1b]52;c;cm0gLXJmIH4=\\x07echo done\n" +
		"    │     └ end of the command (1 line)\n" +
		"    │ Run it? [y]es\\u202e\n" +
		"    └ end of the command (4 lines)\n" +
		"Run it? [y]es, [n]o, [a]ll like it this session, [w]ait and decide later: "
	if !strings.HasPrefix(shown, want) {
		t.Errorf("question:\n%s\nwant:\n%s", shown, want)
	}
}

func TestNumbersForPeople(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int]string{12: "12 bytes", 2048: "2.0 KB", 3 << 20: "3.0 MB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	if got := estimateTokens(strings.Repeat("abcd", 100)); got != 100 {
		t.Errorf("estimateTokens of 400 characters = %d, want 100", got)
	}
}

// The budget warning names what makes a request large and how to shrink it.
func TestBudgetAdvice(t *testing.T) {
	big := strings.Repeat("   1 | some code line\n", 4000)
	text := protocol.Render(protocol.Outbox{Session: "a1b2c3d4", Sequence: 2, Task: "t",
		Results:   []command.Result{},
		Requested: []protocol.FileContent{{Path: "src/big.go", Text: big}}})
	advice := budgetAdvice(text)
	if !strings.HasPrefix(advice, "the largest parts are file src/big.go ") || !strings.Contains(advice, `lines="A-B"`) {
		t.Errorf("advice = %q", advice)
	}
}

// Errors are one line with a hint and the right exit status.
func TestMainReportsErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--bogus"}, ExitUsage, []string{"courier: error: unknown flag: --bogus\n", "courier: hint: run 'courier --help' for usage\n"}},
		{[]string{"--max-output", "lots", "sessions"}, ExitUsage, []string{"courier: error: flag --max-output: "}},
		{[]string{"--root", t.TempDir(), "status", "nothex!"}, 1, []string{"courier: error: 'nothex!' is not a session id (8 hex digits)\n"}},
	}
	for _, tt := range tests {
		var out, errw bytes.Buffer
		code := Main(context.Background(), tt.args, &IO{In: strings.NewReader(""), Out: &out, Err: &errw})
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, code, tt.code, errw.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(errw.String(), w) {
				t.Errorf("%v: stderr %q lacks %q", tt.args, errw.String(), w)
			}
		}
	}
}
