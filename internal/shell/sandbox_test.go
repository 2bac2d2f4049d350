//go:build linux

package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/sandbox"
)

// requireLandlock fails the test when the kernel lacks Landlock, unless
// COURIER_TEST_NO_LANDLOCK=1 says that is expected on this machine.
func requireLandlock(t *testing.T) {
	t.Helper()
	if abi, err := sandbox.Available(); abi == 0 {
		if os.Getenv("COURIER_TEST_NO_LANDLOCK") == "1" {
			t.Skipf("landlock unavailable (%v); skipped because COURIER_TEST_NO_LANDLOCK=1", err)
		}
		t.Fatalf("landlock unavailable: %v; set COURIER_TEST_NO_LANDLOCK=1 to skip the sandbox tests on such a kernel", err)
	}
}

// outsideDir returns a new folder that is neither the workspace nor a
// temporary folder, so a sandboxed command must not write there.
func outsideDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	for _, base := range []string{wd, home} {
		if base == "" || strings.HasPrefix(base, os.TempDir()) || strings.HasPrefix(base, "/tmp") {
			continue
		}
		dir, err := os.MkdirTemp(base, ".courier-shell-probe-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Fatalf("no folder outside the temporary folders to probe writes in (tried %s and %s)", wd, home)
	return ""
}

func TestRunSandboxed(t *testing.T) {
	requireLandlock(t)
	ws, out := outsideDir(t), outsideDir(t)
	res := run(t, Spec{
		Command: `echo inside > inside.txt; echo outside > "$OUT/outside.txt"; env`,
		Dir:     ws,
		Env:     []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=secret-key", "OUT=" + out},
		Sandbox: &sandbox.Options{Writable: []string{ws}, Strict: true},
		Timeout: 30 * time.Second,
	})
	if !res.Sandboxed {
		t.Errorf("Result.Sandboxed is false with landlock available")
	}
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Errorf("write inside the workspace failed: %v\n%s", err, res.Output)
	}
	if _, err := os.Stat(filepath.Join(out, "outside.txt")); err == nil {
		t.Errorf("sandboxed command wrote outside the workspace")
	}
	if !strings.Contains(res.Output, "outside.txt: Permission denied") {
		t.Errorf("output lacks the denied write:\n%s", res.Output)
	}
	if strings.Contains(res.Output, "secret-key") || !strings.Contains(res.Output, "PAGER=cat\n") {
		t.Errorf("sandboxed environment is not filtered:\n%s", res.Output)
	}
}

func TestRunSandboxedTimeout(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	ws := t.TempDir()
	marker := filepath.Join(ws, "marker")
	start := time.Now()
	res := run(t, Spec{
		Command: grandchildMarker(marker, 3) + "& echo started; sleep 100",
		Dir:     ws,
		Sandbox: &sandbox.Options{Writable: []string{ws}},
		Timeout: 300 * time.Millisecond,
	})
	if !res.TimedOut || !res.Sandboxed || res.Output != "started\n" {
		t.Errorf("got %+v, want a sandboxed, timed-out run", res)
	}
	assertNeverWritten(t, marker, start.Add(3*time.Second))
}
