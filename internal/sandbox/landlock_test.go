//go:build linux

package sandbox_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

func TestSandboxFilesystem(t *testing.T) {
	sandboxtest.RequireLandlock(t, 5) // 5: truncate (3) and device ioctl (5) are exercised
	tests := []struct {
		name   string
		script string
		allow  bool
	}{
		{"write in workspace", `echo x > "$WS/new" && cat "$WS/new"`, true},
		{"truncate in workspace", `printf long > "$WS/t" && : > "$WS/t" && truncate -s 0 "$WS/t" && test ! -s "$WS/t"`, true},
		{"link across workspace folders", `mkdir -p "$WS/a" "$WS/b" && echo x > "$WS/a/f" && ln "$WS/a/f" "$WS/b/f" && mv "$WS/a/f" "$WS/b/g"`, true},
		{"write in /tmp", `f=$(mktemp /tmp/courier-probe.XXXXXX) && echo x > "$f" && rm "$f"`, true},
		{"read outside", `cat "$OUT/existing"`, true},
		{"list and run system programs", `ls / > /dev/null && /bin/true`, true},
		{"common devices", `echo x > /dev/null && head -c 4 /dev/urandom | wc -c && head -c 1 /dev/zero > /dev/null`, true},
		{"terminal ioctls on a new pty", `script -qec 'stty size' /dev/null`, true},
		{"write outside", `echo x > "$OUT/new"`, false},
		{"overwrite outside", `echo changed > "$OUT/existing"`, false},
		{"delete outside", `rm -f "$OUT/existing"`, false},
		{"make folder outside", `mkdir "$OUT/sub"`, false},
		{"move from outside into workspace", `mv "$OUT/existing" "$WS/"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The workspace too lies outside the temporary folders, as a
			// real one does, so only the Writable rule can allow writes.
			ws, out := sandboxtest.OutsideDir(t), sandboxtest.OutsideDir(t)
			existing := filepath.Join(out, "existing")
			if err := os.WriteFile(existing, []byte("original\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			output, code := runSandboxed(t, sandboxRun{
				opts:   sandbox.Options{Writable: []string{ws}, Strict: true},
				script: tt.script,
				dir:    ws,
				env:    []string{"WS=" + ws, "OUT=" + out},
			})
			if tt.allow && code != 0 {
				t.Errorf("sandbox denied an allowed operation: exit %d: %s", code, output)
			}
			if !tt.allow && code == 0 {
				t.Errorf("sandbox allowed a forbidden operation: %s", output)
			}
			assertOutsideUnchanged(t, out, existing)
		})
	}
}

// assertOutsideUnchanged checks that the outside folder still holds exactly
// the original file, whatever the command tried.
func assertOutsideUnchanged(t *testing.T, out, existing string) {
	t.Helper()
	data, err := os.ReadFile(existing)
	if err != nil || string(data) != "original\n" {
		t.Errorf("file outside the workspace changed: %q, %v", data, err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("folder outside the workspace has %d entries, want only the original file", len(entries))
	}
}

func TestSandboxNoNetwork(t *testing.T) {
	sandboxtest.RequireLandlock(t, sandbox.NetABI)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("this test connects with bash's /dev/tcp: %v", err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go acceptAll(ln)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	connect := `bash -c 'exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo connected'`
	tests := []struct {
		name      string
		noNetwork bool
		want      bool
	}{
		{"network allowed", false, true},
		{"network cut", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			output, code := runSandboxed(t, sandboxRun{
				opts:   sandbox.Options{Writable: []string{ws}, NoNetwork: tt.noNetwork},
				script: connect,
				dir:    ws,
			})
			if got := code == 0 && strings.Contains(output, "connected"); got != tt.want {
				t.Errorf("connect succeeded = %v, want %v (exit %d: %s)", got, tt.want, code, output)
			}
		})
	}
}

func acceptAll(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func TestSandboxCannotSignalOutside(t *testing.T) {
	sandboxtest.RequireLandlock(t, 6) // signal scoping
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer victim.Process.Kill()
	ws := t.TempDir()
	pid := strconv.Itoa(victim.Process.Pid)
	output, _ := runSandboxed(t, sandboxRun{
		opts:   sandbox.Options{Writable: []string{ws}},
		script: "kill -TERM " + pid + " && echo outside-killed; sleep 5 & kill -TERM $! && echo own-child-killed",
		dir:    ws,
	})
	if strings.Contains(output, "outside-killed") {
		t.Errorf("sandboxed command signalled a process outside the sandbox: %s", output)
	}
	if !strings.Contains(output, "own-child-killed") {
		t.Errorf("sandboxed command could not signal its own child: %s", output)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("process outside the sandbox is gone: %v", err)
	}
}

func TestSandboxLauncherFailures(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	ws := t.TempDir()
	tests := []struct {
		name string
		opts sandbox.Options
	}{
		{"missing writable folder", sandbox.Options{Writable: []string{filepath.Join(ws, "missing")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			output, code := runSandboxed(t, sandboxRun{opts: tt.opts, script: "echo ran", dir: ws})
			if code != sandbox.ExitFailure || strings.Contains(output, "ran") || !strings.HasPrefix(output, "courier: error: sandbox: ") {
				t.Errorf("got exit %d with %q, want %d and a courier error line", code, output, sandbox.ExitFailure)
			}
		})
	}
}

func TestCheckAcceptsWhatTheKernelSupports(t *testing.T) {
	sandboxtest.RequireLandlock(t, sandbox.NetABI)
	want, _ := sandbox.Available()
	for _, opts := range []sandbox.Options{{}, {Strict: true}, {NoNetwork: true}} {
		abi, err := sandbox.Check(opts)
		if err != nil || abi != want {
			t.Errorf("sandbox.Check(%+v) = %d, %v; want %d and no error", opts, abi, err, want)
		}
	}
}
