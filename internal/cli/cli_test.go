package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// Every command a person can run shows an example in its --help.
func TestEveryCommandHasAnExample(t *testing.T) {
	root := newRoot(&IO{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// cobra's own commands (help, completion and its shells) bring
		// their own help.
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if !c.Hidden && c.Example == "" {
			t.Errorf("'%s' has no example in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// Errors are one line with a hint (its next step carrying the --root
// given) and the right exit status; every way of calling courier wrongly
// is a usage error, exit status 2.
func TestMainReportsErrors(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--bogus"}, ExitUsage, []string{"courier: error: unknown flag: --bogus\n", "courier: hint: run 'courier --help' for usage\n"}},
		{[]string{"--max-output", "lots", "sessions"}, ExitUsage, []string{"courier: error: flag --max-output: "}},
		{[]string{"bogus"}, ExitUsage, []string{"courier: error: unknown command \"bogus\"\n", "courier: hint: run 'courier --help' for the commands\n"}},
		{[]string{"--root", root, "parse"}, ExitUsage, []string{"courier: error: accepts 1 arg(s), received 0\n", "courier: hint: run 'courier --root " + root + " parse --help' for usage\n"}},
		{[]string{"--root", root, "status", "a", "b"}, ExitUsage, []string{"courier: error: accepts at most 1 arg(s), received 2\n"}},
		{[]string{"--root", root, "sessions", "extra"}, ExitUsage, []string{"courier: error: unknown command \"extra\" for \"courier sessions\"\n"}},
		{[]string{"policy", "chek", "x"}, ExitUsage, []string{"courier: error: unknown command \"chek\" for \"courier policy\"\n", "courier: hint: did you mean 'courier policy check'?\n"}},
		{[]string{"sandbox", "bogus"}, ExitUsage, []string{"courier: error: unknown command \"bogus\" for \"courier sandbox\"\n"}},
		{[]string{"help", "bogus"}, ExitUsage, []string{"courier: error: unknown help topic \"bogus\"\n"}},
		{[]string{"completion", "bogus"}, ExitUsage, []string{"courier: error: unknown command \"bogus\" for \"courier completion\"\n"}},
		{[]string{"--root", root, "new"}, ExitUsage, []string{"courier: error: requires at least 1 arg(s), only received 0\n"}},
		{[]string{"--root", root, "new", "--no-watch", " "}, ExitUsage, []string{"courier: error: the task is empty\n", "courier: hint: describe the task"}},
		{[]string{"--root", root, "watch", "--bogus"}, ExitUsage, []string{"courier: error: unknown flag: --bogus\n"}},
		{[]string{"--root", root, "status", "nothex!"}, 1, []string{"courier: error: 'nothex!' is not a session id (8 hex digits)\n", "courier: hint: run 'courier --root " + root + " sessions' to list the sessions\n"}},
		{[]string{"--root", root, "status"}, 1, []string{"courier: error: no incomplete session\n", "courier: hint: start one with 'courier --root " + root + " new \"TASK\"', or name a session id\n"}},
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

// TestNotifierRunsOutsideTheWorkspace calls the person's attention from
// the workspace, where a reply planted a program, with a stand-in
// notify-send that runs what it finds in its working folder: it must run
// elsewhere.
func TestNotifierRunsOutsideTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	if err := os.WriteFile(filepath.Join(ws, ".hook"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	done := filepath.Join(t.TempDir(), "done")
	script := "#!/bin/sh\n[ -x .hook ] && ./.hook\necho \"$3\" > " + done + "\n"
	if err := os.WriteFile(filepath.Join(bin, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Chdir(ws)
	g := &globals{io: &IO{Getenv: func(k string) string { return map[string]string{"DISPLAY": ":7"}[k] }}}
	g.notifier()("your turn")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if data, err := os.ReadFile(done); err == nil && string(data) == "your turn\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("notify-send never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("notify-send ran the program planted in its working folder (%v)", err)
	}
}

// The next steps start courier as the person did: a binary 'go run' built
// is started again with 'go run ./cmd/courier' from the clone, and a path
// typed is kept, quoted for the shell where it needs it.
func TestProgramOfNextSteps(t *testing.T) {
	clone, other := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(clone, "cmd", "courier"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "cmd", "courier", "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ arg0, cwd, want string }{
		{"courier", other, "courier"},
		{"", other, "courier"},
		{"/tmp/go-build1090382409/b001/exe/courier", clone, "go run ./cmd/courier"},
		{"/home/me/.cache/go-build/f6/f6c8dd-d/courier", clone, "go run ./cmd/courier"},
		{"/tmp/go-build1090382409/b001/exe/courier", other, "courier"},
		{"./bin/courier", other, "./bin/courier"},
		{"/opt/my tools/courier", other, `"/opt/my tools/courier"`},
	}
	for _, tt := range tests {
		if got := program(tt.arg0, tt.cwd); got != tt.want {
			t.Errorf("program(%q, %s) = %q, want %q", tt.arg0, tt.cwd, got, tt.want)
		}
	}
}
