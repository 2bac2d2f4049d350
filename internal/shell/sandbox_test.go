//go:build linux

package shell

import (
	"os"
	"os/exec"
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
		// As courier runs commands: the person's places shown, their
		// caches under the session's layer, limits.
		{"as courier runs them", &sandbox.Options{Writable: []string{ws}, Caches: b.TempDir(), Session: "bench", Home: os.Getenv("HOME"),
			Show: sandbox.ToolFolders(os.Getenv, nil), Tools: sandbox.PersonCaches(os.Getenv), Limits: sandbox.Limits{Processes: 1024, Memory: 2 << 30}, Kernel: k}},
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

// A command that starts processes or takes memory without end is stopped
// at the limits, and says which it reached where the kernel tells (a
// control group); nothing it started is left.
func TestRunSandboxedLimits(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is not on PATH (.ci/run installs it)")
	}
	tests := []struct {
		name, script string
		limits       sandbox.Limits
		hit          string
		refused      string // what the command itself met
	}{
		{"processes", `python3 -c '
import os, time
n = 0
try:
    for i in range(400):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as e:
    print("fork refused:", e.strerror)
print("started", n)'`, sandbox.Limits{Processes: 50}, "processes", "fork refused"},
		{"memory", `python3 -c '
b = bytearray(1 << 30)
print("allocated", len(b))'`, sandbox.Limits{Memory: 256 << 20}, "memory", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			res := run(t, Spec{
				Command: tt.script, Dir: ws, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")},
				Sandbox: &sandbox.Options{Writable: []string{ws}, Show: sandbox.ToolFolders(os.Getenv, nil), Home: os.Getenv("HOME"), Limits: tt.limits, Kernel: k},
				Timeout: time.Minute,
			})
			if strings.Contains(res.Output, "allocated") || strings.Contains(res.Output, "started 400") {
				t.Errorf("the command went past its limit:\n%s", res.Output)
			}
			if tt.refused != "" && !strings.Contains(res.Output, tt.refused) {
				t.Errorf("the command did not meet its limit:\n%s", res.Output)
			}
			if k.Cgroup && res.Limit != tt.hit {
				t.Errorf("Result.Limit = %q, want %q:\n%s", res.Limit, tt.hit, res.Output)
			}
			if !k.Cgroup && res.ExitCode == 0 && tt.hit == "memory" {
				t.Errorf("the allocation did not fail:\n%s", res.Output)
			}
			if res.Duration > 30*time.Second {
				t.Errorf("the command's processes outlived it: it took %s", res.Duration)
			}
		})
	}
}

// BenchmarkFirstGoBuild compares a new session's first 'go build' of a
// small program that uses net/http and encoding/json with the same build
// outside courier, on the person's warm caches: the session sees them
// under a layer of its own, so it pays what the person pays, not a build
// of the standard library from nothing.
func BenchmarkFirstGoBuild(b *testing.B) {
	k := sandbox.Probe(b.TempDir())
	if !k.Namespaces || !k.Overlay {
		b.Skip("NOT RUN: the kernel refuses user namespaces or overlay mounts in them: " + k.NamespacesWhy + k.OverlayWhy)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skip("NOT RUN: go is not on PATH")
	}
	program := "package main\n\nimport (\n\t\"encoding/json\"\n\t\"net/http\"\n\t\"os\"\n)\n\nfunc main() {\n\tjson.NewEncoder(os.Stdout).Encode(http.StatusOK)\n}\n"
	workspace := func(b *testing.B) string {
		ws := b.TempDir()
		for name, content := range map[string]string{"go.mod": "module example.com/first\n\ngo 1.21\n", "main.go": program} {
			if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		return ws
	}
	// The person's cache is warm: they have built such a program before.
	warm := exec.Command(goTool, "build", "-o", os.DevNull, ".")
	warm.Dir = workspace(b)
	if out, err := warm.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	b.Run("outside courier", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(goTool, "build", "-o", os.DevNull, ".")
			cmd.Dir = workspace(b)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	b.Run("first build of a new session", func(b *testing.B) {
		for b.Loop() {
			ws := workspace(b)
			res, err := Run(b.Context(), Spec{Command: "go build -o /dev/null .", Dir: ws, Env: os.Environ(), Timeout: 5 * time.Minute,
				Sandbox: &sandbox.Options{Writable: []string{ws}, Caches: b.TempDir(), Session: "first", Home: os.Getenv("HOME"),
					Show: sandbox.ToolFolders(os.Getenv, nil), Tools: sandbox.PersonCaches(os.Getenv), Kernel: k}})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%v: %s", err, res.Output)
			}
		}
	})
}
