package engine_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
)

func TestRunCommand(t *testing.T) {
	t.Parallel()
	withDir := func(cmd, dir string) command.Command {
		c := run(cmd)
		c.Dir = dir
		return c
	}
	withTimeout := func(cmd string, d time.Duration) command.Command {
		c := run(cmd)
		c.Timeout = command.Duration(d)
		return c
	}
	withNote := func(cmd, note string) command.Command {
		c := run(cmd)
		c.Note = note
		return c
	}
	withEnv := func(cmd string, env map[string]string) command.Command {
		c := run(cmd)
		c.Env = env
		return c
	}
	cases := []struct {
		name    string
		opts    engine.Options
		cmd     command.Command
		status  command.Status
		summary string
		output  string // exact, unless the case says otherwise
		exit    int    // -1: no exit code
	}{{
		name:    "success",
		cmd:     run("echo hi"),
		status:  command.OK,
		summary: "Ran 'echo hi' (exit code 0)",
		output:  "hi\n",
	}, {
		name:    "failure with stderr",
		cmd:     run("echo oops >&2; exit 3"),
		status:  command.Failed,
		summary: "Ran 'echo oops >&2; exit 3' (exit code 3)",
		output:  "oops\n",
		exit:    3,
	}, {
		name:    "script of several lines",
		cmd:     run("echo a\necho b\n"),
		status:  command.OK,
		summary: "Ran 'echo a …' (exit code 0)",
		output:  "a\nb\n",
	}, {
		name:    "working folder",
		cmd:     withDir("basename \"$(pwd)\"", "sub/deeper"),
		status:  command.OK,
		summary: "Ran 'basename \"$(pwd)\"' (exit code 0)",
		output:  "deeper\n",
	}, {
		name:    "missing working folder",
		cmd:     withDir("touch here.txt", "nope"),
		status:  command.Failed,
		summary: "Working folder 'nope' not found",
		exit:    -1,
	}, {
		name:    "working folder is a file",
		cmd:     withDir("touch here.txt", "sub/file.txt"),
		status:  command.Failed,
		summary: "Working folder 'sub/file.txt' is a file",
		exit:    -1,
	}, {
		name:    "its own time limit",
		cmd:     withTimeout("echo begun; sleep 600", 300*time.Millisecond),
		status:  command.Failed,
		summary: "Command 'echo begun; sleep 600' timed out after 300ms and was stopped, with every process it started",
		output:  "begun\n",
		exit:    -1,
	}, {
		name:    "the session's time limit",
		opts:    engine.Options{Timeout: 300 * time.Millisecond},
		cmd:     run("sleep 600"),
		status:  command.Failed,
		summary: "Command 'sleep 600' timed out after 300ms and was stopped, with every process it started",
		exit:    -1,
	}, {
		name:    "a timeout above an hour is refused",
		cmd:     withTimeout("touch here.txt", 136*365*24*time.Hour),
		status:  command.Failed,
		summary: `Not run: timeout="1191360h0m0s" is longer than the 1 hour a command may take; use at most timeout="1h", or split the work into shorter commands`,
		exit:    -1,
	}, {
		name:    "a timeout of just over an hour is refused",
		cmd:     withTimeout("touch here.txt", time.Hour+time.Second),
		status:  command.Failed,
		summary: `Not run: timeout="1h0m1s" is longer than the 1 hour a command may take; use at most timeout="1h", or split the work into shorter commands`,
		exit:    -1,
	}, {
		name:    "a timeout of an hour is allowed",
		cmd:     withTimeout("echo fine", time.Hour),
		status:  command.OK,
		summary: "Ran 'echo fine' (exit code 0)",
		output:  "fine\n",
	}, {
		name:    "what the reader left out of the block is told",
		cmd:     withNote("echo hi", "courier left out its first line 'bash'"),
		status:  command.OK,
		summary: "Ran 'echo hi' (exit code 0); courier left out its first line 'bash'",
		output:  "hi\n",
	}, {
		name:    "its own environment",
		cmd:     withEnv("echo $GREETING", map[string]string{"GREETING": "hello"}),
		status:  command.OK,
		summary: "Ran 'echo $GREETING' (exit code 0)",
		output:  "hello\n",
	}, {
		name:    "secrets removed",
		opts:    engine.Options{Env: []string{"PATH=" + os.Getenv("PATH"), "DEPLOY_TOKEN=hunter2"}},
		cmd:     run("echo ${DEPLOY_TOKEN:-none}"),
		status:  command.OK,
		summary: "Ran 'echo ${DEPLOY_TOKEN:-none}' (exit code 0)",
		output:  "none\n",
	}, {
		name:    "secret kept on request",
		opts:    engine.Options{Env: []string{"PATH=" + os.Getenv("PATH"), "DEPLOY_TOKEN=hunter2"}, KeepEnv: []string{"DEPLOY_TOKEN"}},
		cmd:     run("echo ${DEPLOY_TOKEN:-none}"),
		status:  command.OK,
		summary: "Ran 'echo ${DEPLOY_TOKEN:-none}' (exit code 0)",
		output:  "hunter2\n",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tc.opts)
			h.write("sub/deeper/.keep", "")
			h.write("sub/file.txt", "")
			r := h.apply(tc.cmd).Results[0]
			if r.Status != tc.status || r.Summary != tc.summary {
				t.Errorf("%s %q\nwant %s %q", r.Status, r.Summary, tc.status, tc.summary)
			}
			if r.Output != tc.output {
				t.Errorf("output %q, want %q", r.Output, tc.output)
			}
			switch {
			case tc.exit < 0 && r.ExitCode != nil:
				t.Errorf("exit code %d, want none", *r.ExitCode)
			case tc.exit >= 0 && (r.ExitCode == nil || *r.ExitCode != tc.exit):
				t.Errorf("exit code %v, want %d", r.ExitCode, tc.exit)
			}
			if h.exists("here.txt") || h.exists("sub/here.txt") {
				t.Error("a command with a bad working folder ran")
			}
		})
	}
}

func TestRunCommandDetails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{MaxOutput: 200})
	out := h.apply(run("echo $COURIER_COMMAND"), run("seq 1 5000"))
	tag := out.Results[0]
	if tag.Output != h.st.SessionID+"/1/1\n" {
		t.Errorf("the command's tag is %q, want session/sequence/number", tag.Output)
	}
	if tag.Command != "echo $COURIER_COMMAND" || tag.Type != command.RunCommand {
		t.Errorf("result names %s %q", tag.Type, tag.Command)
	}
	long := out.Results[1]
	if n := len([]rune(long.Output)); n > 200 || !strings.HasPrefix(long.Output, "1\n2\n") || !strings.HasSuffix(long.Output, "4999\n5000\n") || !strings.Contains(long.Output, "characters cut") {
		t.Errorf("output capped at 200 characters is %d characters:\n%s", n, long.Output)
	}
}
