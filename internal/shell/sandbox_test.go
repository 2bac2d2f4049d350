//go:build linux

package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

func TestRunSandboxed(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	ws, out := sandboxtest.OutsideDir(t), sandboxtest.OutsideDir(t)
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
	sandboxtest.RequireLandlock(t, 1)
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
