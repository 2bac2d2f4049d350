package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

func TestSandboxedCommands(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireLandlock(t, 1)
	k := sandboxtest.RequireNamespaces(t)
	outside := sandboxtest.OutsideDir(t)
	h := newHarness(t, engine.Options{Sandbox: &sandbox.Options{Kernel: k, Caches: filepath.Join(t.TempDir(), "cache")}})
	h.write("sub/.keep", "")
	inSub := run("echo below > below.txt")
	inSub.Dir = "sub"
	out := h.apply(
		run("echo inside > inside.txt && cat inside.txt"),
		inSub,
		run("echo outside > "+filepath.Join(outside, "escaped.txt")),
		create("after.txt", "after\n"),
		run(`echo "$TMPDIR"`),
	)
	if r := out.Results[0]; r.Status != command.OK || r.Output != "inside\n" {
		t.Errorf("a sandboxed command could not write in the workspace: %s %q %q", r.Status, r.Summary, r.Output)
	}
	if h.read("inside.txt") != "inside\n" || h.read("sub/below.txt") != "below\n" {
		t.Error("the sandboxed commands' files are not in the workspace")
	}
	r := out.Results[2]
	if r.Status != command.Failed || r.ExitCode == nil || *r.ExitCode == 0 {
		t.Errorf("a write outside the workspace: %s %q", r.Status, r.Summary)
	}
	if !strings.Contains(r.Output, "nonexistent") {
		t.Errorf("output %q does not say the folder outside is not there", r.Output)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped.txt")); err == nil {
		t.Error("the sandboxed command wrote outside the workspace")
	}
	if out.Results[3].Status != command.OK {
		t.Errorf("file change after a sandboxed command: %q", out.Results[3].Summary)
	}
	if got := out.Results[4].Output; !strings.HasSuffix(got, filepath.Join("sessions", h.st.SessionID, "tmp")+"\n") {
		t.Errorf("TMPDIR = %q, want the session's own temporary folder", got)
	}
}

// An approved command runs with .git writable; any other finds it
// read-only.
func TestSandboxedGitNeedsApproval(t *testing.T) {
	t.Parallel()
	k := sandboxtest.RequireNamespaces(t)
	pol, err := policy.New(policy.Config{Ask: []string{"git-config-writer"}, NoDefaults: true})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, engine.Options{Policy: pol, Sandbox: &sandbox.Options{Kernel: k}})
	h.write(".git/config", "[core]\n")
	h.write("bin/git-config-writer", "#!/bin/sh\necho \"$1\" >> .git/config\n")
	if err := os.Chmod(h.path("bin/git-config-writer"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := h.apply(
		run(`echo "	fsmonitor = touch pwned" >> .git/config`),
		run(`rm -rf .git`),
		run(`./bin/git-config-writer "	approved = true"`),
	)
	if out.Waiting == nil || out.Waiting.Index != 2 {
		t.Fatalf("the turn did not ask about the approved command: %+v", out.Waiting)
	}
	// The person approves it, as the runner journals their answer.
	h.record(history.Record{Kind: history.RecordDecision, Index: 2, Approved: true})
	out = h.resume()
	if r := out.Results[0]; r.Status != command.Failed || !strings.Contains(r.Output, "Read-only file system") {
		t.Errorf("an unapproved write of .git: %s %q %q", r.Status, r.Summary, r.Output)
	}
	if got := h.read(".git/config"); got != "[core]\n\tapproved = true\n" {
		t.Errorf(".git/config = %q, want only the approved command's line", got)
	}
}
