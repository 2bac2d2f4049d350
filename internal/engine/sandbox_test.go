package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

func TestSandboxedCommands(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireLandlock(t, 1)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outside := sandboxtest.OutsideDir(t)
	h := newHarness(t, engine.Options{Sandbox: &sandbox.Options{Exe: exe}})
	h.write("sub/.keep", "")
	inSub := run("echo below > below.txt")
	inSub.Dir = "sub"
	out := h.apply(
		run("echo inside > inside.txt && cat inside.txt"),
		inSub,
		run("echo outside > "+filepath.Join(outside, "escaped.txt")),
		create("after.txt", "after\n"),
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
	if !strings.Contains(r.Output, "denied") {
		t.Errorf("output %q does not say the write was denied", r.Output)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped.txt")); err == nil {
		t.Error("the sandboxed command wrote outside the workspace")
	}
	if out.Results[3].Status != command.OK {
		t.Errorf("file change after a sandboxed command: %q", out.Results[3].Summary)
	}
}
