package engine_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/sandbox"
)

// requireLandlock fails the test on a kernel without Landlock (a command
// would run unconfined there, so the test would mean nothing), unless
// COURIER_TEST_NO_LANDLOCK=1 says that is expected on this machine.
func requireLandlock(t *testing.T) {
	t.Helper()
	abi, err := sandbox.Available()
	if abi > 0 {
		return
	}
	msg := "the kernel has no landlock (ABI " + strconv.Itoa(abi) + "): " + err.Error()
	if os.Getenv("COURIER_TEST_NO_LANDLOCK") == "1" {
		t.Skip(msg + "; skipped because COURIER_TEST_NO_LANDLOCK=1")
	}
	t.Fatal(msg + "; set COURIER_TEST_NO_LANDLOCK=1 to skip the sandbox tests on such a kernel")
}

// outsideDir returns a new folder outside the temporary folders, which the
// sandbox leaves writable by design: under the home folder or, failing
// that, the package folder.
func outsideDir(t *testing.T) string {
	t.Helper()
	var bases []string
	if home, err := os.UserHomeDir(); err == nil {
		bases = append(bases, home)
	}
	if wd, err := os.Getwd(); err == nil {
		bases = append(bases, wd)
	}
	temps := []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"}
	for _, base := range bases {
		if under(base, temps) {
			continue
		}
		dir, err := os.MkdirTemp(base, ".courier-engine-test-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Fatalf("no folder outside the temporary folders to try writes in (tried %v)", bases)
	return ""
}

func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, p); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

func TestSandboxedCommands(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outside := outsideDir(t)
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
