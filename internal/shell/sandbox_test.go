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
	k := sandboxtest.RequireNamespaces(t)
	ws, out, caches := sandboxtest.OutsideDir(t), sandboxtest.OutsideDir(t), t.TempDir()
	res := run(t, Spec{
		Command: `echo inside > inside.txt; echo outside > "$OUT/outside.txt"; env`,
		Dir:     ws,
		Env:     []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=secret-key", "OUT=" + out},
		KeepEnv: []string{"OUT"},
		Sandbox: &sandbox.Options{Writable: []string{ws}, Caches: caches, Session: "s1", Strict: true, Kernel: k},
		Timeout: 30 * time.Second,
	})
	if !res.Sandboxed {
		t.Errorf("Result.Sandboxed is false with every layer available")
	}
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Errorf("write inside the workspace failed: %v\n%s", err, res.Output)
	}
	if _, err := os.Stat(filepath.Join(out, "outside.txt")); err == nil {
		t.Errorf("sandboxed command wrote outside the workspace")
	}
	// The folder outside is not in the command's world at all.
	if !strings.Contains(res.Output, "outside.txt: Directory nonexistent") {
		t.Errorf("output lacks the failed write:\n%s", res.Output)
	}
	layer := filepath.Join(caches, "sessions", "s1")
	for _, want := range []string{"PAGER=cat\n", "XDG_CACHE_HOME=" + filepath.Join(layer, "xdg") + "\n", "TMPDIR=" + filepath.Join(layer, "tmp") + "\n"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("sandboxed environment lacks %q:\n%s", want, res.Output)
		}
	}
	if strings.Contains(res.Output, "secret-key") {
		t.Errorf("sandboxed environment holds a secret:\n%s", res.Output)
	}
}

func TestRunSandboxedStrictRefusesMissingLayers(t *testing.T) {
	ws := t.TempDir()
	_, err := Run(t.Context(), Spec{
		Command: "echo ran > ran.txt",
		Dir:     ws,
		// As on a kernel that refuses user namespaces.
		Sandbox: &sandbox.Options{Writable: []string{ws}, Strict: true, Kernel: sandbox.Kernel{Landlock: 7, Seccomp: true, NamespacesWhy: "refused"}},
	})
	if err == nil || !strings.Contains(err.Error(), `sandbox = "strict"`) {
		t.Errorf("Run = %v, want a refusal naming the strict setting", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Error("the refused command ran")
	}
}

func TestRunSandboxedTimeout(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireLandlock(t, 1)
	k := sandboxtest.RequireNamespaces(t)
	for name, kernel := range map[string]sandbox.Kernel{"every layer": k, "without namespaces": {Landlock: k.Landlock}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			marker := filepath.Join(ws, "marker")
			start := time.Now()
			res := run(t, Spec{
				Command: grandchildMarker(marker, 3) + "& echo started; sleep 100",
				Dir:     ws,
				Sandbox: &sandbox.Options{Writable: []string{ws}, Kernel: kernel},
				Timeout: 300 * time.Millisecond,
			})
			if !res.TimedOut || !res.Sandboxed || res.Output != "started\n" {
				t.Errorf("got %+v, want a sandboxed, timed-out run", res)
			}
			assertNeverWritten(t, marker, start.Add(3*time.Second))
		})
	}
}

// BenchmarkRunSandboxed shows what each way of confining costs a command:
// `true` run bare, under Landlock alone, and with every layer (namespaces,
// mounts, Landlock, no capabilities), with and without the network.
func BenchmarkRunSandboxed(b *testing.B) {
	k := sandbox.Probe(b.TempDir())
	if !k.Namespaces {
		b.Skip("NOT RUN: the kernel refuses user namespaces: " + k.NamespacesWhy)
	}
	ws := b.TempDir()
	cases := []struct {
		name string
		sb   *sandbox.Options
	}{
		{"unconfined", nil},
		{"landlock only", &sandbox.Options{Writable: []string{ws}, Kernel: sandbox.Kernel{Landlock: k.Landlock}}},
		{"every layer", &sandbox.Options{Writable: []string{ws}, Caches: b.TempDir(), Session: "bench", Kernel: k}},
		{"every layer, network cut", &sandbox.Options{Writable: []string{ws}, Caches: b.TempDir(), Session: "bench", NoNetwork: true, Kernel: k}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := Run(b.Context(), Spec{Command: "true", Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: c.sb})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}
