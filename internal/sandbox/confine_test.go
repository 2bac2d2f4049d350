//go:build linux

package sandbox_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// layerSets are the two ways commands are confined: with every layer the
// kernel allows, and as on a kernel that refuses user namespaces
// (Landlock, capabilities and no_new_privs only).
func layerSets(t *testing.T) map[string]sandbox.Kernel {
	t.Helper()
	k := sandboxtest.RequireNamespaces(t)
	landlockOnly := sandbox.Kernel{Landlock: k.Landlock, Seccomp: k.Seccomp}
	return map[string]sandbox.Kernel{"every layer": k, "without namespaces": landlockOnly}
}

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
		{"write in TMPDIR", `f=$(mktemp) && echo x > "$f" && rm "$f"`, true},
		{"list and run system programs", `ls / > /dev/null && /bin/true`, true},
		{"common devices", `echo x > /dev/null && head -c 4 /dev/urandom | wc -c && head -c 1 /dev/zero > /dev/null`, true},
		{"terminal ioctls on a new pty", `script -qec 'stty size' /dev/null`, true},
		{"write outside", `echo x > "$OUT/new"`, false},
		{"overwrite outside", `echo changed > "$OUT/existing"`, false},
		{"delete outside", `rm "$OUT/existing"`, false},
		{"make folder outside", `mkdir "$OUT/sub"`, false},
		{"move from outside into workspace", `mv "$OUT/existing" "$WS/"`, false},
		{"make a fifo in the workspace", `mkfifo "$WS/fifo"`, true},
		{"make a device node in the workspace", `mknod "$WS/null" c 1 3`, false},
	}
	for set, k := range layerSets(t) {
		for _, tt := range tests {
			t.Run(set+"/"+tt.name, func(t *testing.T) {
				// The workspace too lies outside the temporary folders, as a
				// real one does, so only the Writable rule can allow writes.
				ws, out := sandboxtest.OutsideDir(t), sandboxtest.OutsideDir(t)
				existing := filepath.Join(out, "existing")
				if err := os.WriteFile(existing, []byte("original\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				output, code := runSandboxed(t, sandboxRun{
					opts:   sandbox.Options{Writable: []string{ws}, Caches: t.TempDir(), Kernel: k},
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

// listener counts what reaches it: TCP connections, UDP datagrams or UNIX
// socket connections.
type listener struct {
	addr    string // what the command dials
	arrived chan string
}

func listenTCP(t *testing.T) listener {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return acceptAll(ln, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}

func listenUnix(t *testing.T, path string) listener {
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return acceptAll(ln, path)
}

func acceptAll(ln net.Listener, addr string) listener {
	l := listener{addr: addr, arrived: make(chan string, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.arrived <- "connection"
			c.Close()
		}
	}()
	return l
}

func listenUDP(t *testing.T) listener {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	l := listener{addr: strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port), arrived: make(chan string, 16)}
	go func() {
		buf := make([]byte, 512)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			l.arrived <- string(buf[:n])
		}
	}()
	return l
}

// received reports what reached l within a short wait.
func (l listener) received() []string {
	var got []string
	deadline := time.After(300 * time.Millisecond)
	for {
		select {
		case s := <-l.arrived:
			got = append(got, s)
		case <-deadline:
			return got
		}
	}
}

// dialer is a small program the command runs to reach a listener.
func dialer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("this test dials with python3: %v", err)
	}
	return `python3 -c '
import socket, sys
kind, addr = sys.argv[1], sys.argv[2]
try:
    if kind == "tcp":
        s = socket.create_connection(("127.0.0.1", int(addr)), timeout=2)
    elif kind == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(5): s.sendto(b"datagram", ("127.0.0.1", int(addr)))
    else:
        s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(addr)
    print("reached")
except OSError as e:
    print("refused:", e); sys.exit(1)
'`
}

func TestSandboxNoNetwork(t *testing.T) {
	sandboxtest.RequireLandlock(t, sandbox.NetABI)
	k := sandboxtest.RequireNamespaces(t)
	dial := dialer(t)
	// The sockets are in a place the person shows commands (read_only);
	// one elsewhere is not in the command's world at all.
	sockDir, elsewhere := sandboxtest.OutsideDir(t), sandboxtest.OutsideDir(t)
	tests := []struct {
		name      string
		kind      string
		listen    func(t *testing.T) listener
		kernel    sandbox.Kernel
		noNetwork bool
		reach     bool
	}{
		{"tcp, network on", "tcp", listenTCP, k, false, true},
		{"udp, network on", "udp", listenUDP, k, false, true},
		{"unix socket, network on", "unix", func(t *testing.T) listener { return listenUnix(t, filepath.Join(sockDir, "on.sock")) }, k, false, true},
		{"unix socket not shown, network on", "unix", func(t *testing.T) listener { return listenUnix(t, filepath.Join(elsewhere, "on.sock")) }, k, false, false},
		{"tcp, network cut", "tcp", listenTCP, k, true, false},
		{"udp, network cut", "udp", listenUDP, k, true, false},
		{"unix socket, network cut", "unix", func(t *testing.T) listener { return listenUnix(t, filepath.Join(sockDir, "cut.sock")) }, k, true, false},
		{"tcp, network cut without namespaces", "tcp", listenTCP, sandbox.Kernel{Landlock: k.Landlock, Seccomp: k.Seccomp}, true, false},
		{"unix socket, network cut without namespaces", "unix", func(t *testing.T) listener { return listenUnix(t, filepath.Join(sockDir, "cut2.sock")) },
			sandbox.Kernel{Landlock: k.Landlock, Seccomp: k.Seccomp}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.listen(t)
			ws := t.TempDir()
			output, code := runSandboxed(t, sandboxRun{
				opts:   sandbox.Options{Writable: []string{ws}, Show: []string{sockDir}, NoNetwork: tt.noNetwork, Kernel: tt.kernel},
				script: dial + " " + tt.kind + " " + l.addr,
				dir:    ws,
			})
			got := l.received()
			if reached := len(got) > 0; reached != tt.reach {
				t.Errorf("the listener got %q, want reached = %v (exit %d: %s)", got, tt.reach, code, output)
			}
			// A UDP sender cannot know whether anyone heard it.
			if !tt.reach && tt.kind != "udp" && (code == 0 || strings.Contains(output, "reached")) {
				t.Errorf("the command thinks it reached the listener: exit %d: %s", code, output)
			}
		})
	}
}

func TestSandboxLoopbackWorksWithTheNetworkCut(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	if !k.Network {
		t.Fatalf("this kernel refuses a network namespace: %s", k.NetworkWhy)
	}
	ws := t.TempDir()
	script := `python3 -c '
import socket
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
c = socket.create_connection(srv.getsockname(), timeout=2)
print("loopback ok")'`
	output, code := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, NoNetwork: true, Kernel: k}, script: script, dir: ws})
	if code != 0 || !strings.Contains(output, "loopback ok") {
		t.Errorf("a server on the loopback is unreachable inside the sandbox: exit %d: %s", code, output)
	}
}

func TestSandboxCannotSignalOutside(t *testing.T) {
	sandboxtest.RequireLandlock(t, 6) // signal scoping
	for set, k := range layerSets(t) {
		t.Run(set, func(t *testing.T) {
			victim := exec.Command("sleep", "60")
			if err := victim.Start(); err != nil {
				t.Fatal(err)
			}
			defer victim.Process.Kill()
			ws := t.TempDir()
			pid := strconv.Itoa(victim.Process.Pid)
			output, _ := runSandboxed(t, sandboxRun{
				opts:   sandbox.Options{Writable: []string{ws}, Kernel: k},
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
		})
	}
}

func TestSandboxHidesOtherProcesses(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	// A process of the person's holding a secret in its environment.
	victim := exec.Command("sleep", "60")
	victim.Env = []string{"VICTIM_SECRET=hunter2-in-environ"}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer victim.Process.Kill()
	ws := t.TempDir()
	output, _ := runSandboxed(t, sandboxRun{
		opts:   sandbox.Options{Writable: []string{ws}, Kernel: k},
		script: `cat /proc/*/environ /proc/$PPID/environ /proc/` + strconv.Itoa(victim.Process.Pid) + `/environ 2>/dev/null | tr '\0' '\n'; echo "processes: $(ls -d /proc/[0-9]* | wc -l)"`,
		dir:    ws,
	})
	if strings.Contains(output, "hunter2") {
		t.Errorf("the command read another process's environment: %s", output)
	}
	var n int
	if _, err := fmt.Sscanf(output[strings.Index(output, "processes: "):], "processes: %d", &n); err != nil || n > 5 {
		t.Errorf("the command sees %d processes, more than its own few (%v): %s", n, err, output)
	}
}

func TestSandboxLeavesNoSurvivors(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatalf("this test detaches with setsid (util-linux): %v", err)
	}
	loop := func(f string) string { return `sh -c 'while :; do echo x >> ` + f + `; sleep 0.1; done'` }
	tests := map[string]string{
		"setsid":                 "setsid " + loop("a") + " > /dev/null 2>&1 &",
		"setsid -f":              "setsid -f " + loop("b") + " > /dev/null 2>&1",
		"double fork":            "( ( " + loop("c") + " & ) & ) > /dev/null 2>&1",
		"tag removed from child": "env -u COURIER_COMMAND " + loop("d") + " > /dev/null 2>&1 &",
		"ignoring SIGTERM":       "( trap '' TERM HUP; setsid " + loop("e") + " ) > /dev/null 2>&1 &",
	}
	ws := t.TempDir()
	var script strings.Builder
	for _, s := range tests {
		script.WriteString(s + "\n")
	}
	script.WriteString("sleep 0.5; echo started\n")
	output, code := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, Kernel: k}, script: script.String(), dir: ws})
	if code != 0 || !strings.Contains(output, "started") {
		t.Fatalf("exit %d: %s", code, output)
	}
	for name, f := range map[string]string{"setsid": "a", "setsid -f": "b", "double fork": "c", "tag removed from child": "d", "ignoring SIGTERM": "e"} {
		p := filepath.Join(ws, f)
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: the background loop never ran (%v)", name, err)
			continue
		}
		assertStopsGrowing(t, name, p)
	}
}

// assertStopsGrowing checks that nothing writes to p any more.
func assertStopsGrowing(t *testing.T, name, p string) {
	t.Helper()
	before, _ := os.Stat(p)
	time.Sleep(500 * time.Millisecond)
	after, _ := os.Stat(p)
	if after.Size() != before.Size() {
		t.Errorf("%s: a process of the command still writes %s after it ended (%d → %d bytes)", name, p, before.Size(), after.Size())
	}
}

func TestSandboxReadOnlyGit(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	ws := t.TempDir()
	gitDir := filepath.Join(ws, ".git")
	for _, f := range []string{"config", "hooks/README"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(gitDir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gitDir, f), []byte("original\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	attack := `echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config; echo 'exit 0' > .git/hooks/pre-commit; rm -rf .git; mv .git moved; echo inside > ok.txt`
	output, _ := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, ReadOnly: []string{gitDir}, Kernel: k}, script: attack, dir: ws})
	if data, err := os.ReadFile(filepath.Join(gitDir, "config")); err != nil || string(data) != "original\n" {
		t.Errorf(".git/config changed: %q %v\n%s", data, err, output)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "hooks", "pre-commit")); err == nil {
		t.Errorf("a hook was written into .git:\n%s", output)
	}
	if _, err := os.Stat(filepath.Join(ws, "ok.txt")); err != nil {
		t.Errorf("the rest of the workspace is not writable: %v\n%s", err, output)
	}
	// Approved, the command runs with .git writable.
	output, code := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, Kernel: k}, script: `echo approved >> .git/config`, dir: ws})
	if data, _ := os.ReadFile(filepath.Join(gitDir, "config")); code != 0 || string(data) != "original\napproved\n" {
		t.Errorf("an approved command could not write .git: exit %d %s", code, output)
	}
}

func TestSandboxHidesSecretsAndHome(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	home := sandboxtest.OutsideDir(t)
	files := map[string]string{
		".ssh/id_ed25519":     "SSH-KEY-SECRET",
		".aws/credentials":    "AWS-SECRET",
		".netrc":              "NETRC-SECRET",
		"notes.txt":           "ordinary notes",
		".cargo/bin/tool":     "#!/bin/sh\necho tool-ran\n",
		"project/src/main.go": "package main\n",
	}
	for name, content := range files {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(home, "project")
	// The launcher's command line is readable too: it must not name them.
	read := `cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc ~/notes.txt; echo listing; ls -A ~/.ssh; ~/.cargo/bin/tool; echo written > src/new.txt; tr '\0' ' ' < /proc/1/cmdline`
	env := []string{"HOME=" + home}
	getenv := func(k string) string { return map[string]string{"HOME": home, "PATH": "/usr/bin:/bin"}[k] }
	private := sandbox.Options{Writable: []string{ws}, Home: home, Show: sandbox.ToolFolders(getenv, nil), Kernel: k}

	output, _ := runSandboxed(t, sandboxRun{opts: private, script: read, dir: ws, env: env})
	if strings.Contains(output, "ordinary notes") || strings.Contains(output, "SECRET") {
		t.Errorf("the private home still shows its files:\n%s", output)
	}
	if !strings.Contains(output, "tool-ran") {
		t.Errorf("the private home lost its tool folders:\n%s", output)
	}

	readable := private
	readable.HomeReadable = true
	output, _ = runSandboxed(t, sandboxRun{opts: readable, script: read, dir: ws, env: env})
	for _, secret := range []string{"SSH-KEY-SECRET", "AWS-SECRET", "NETRC-SECRET", "\nid_ed25519\n", ".ssh "} {
		if strings.Contains(output, secret) {
			t.Errorf("the command read %s:\n%s", secret, output)
		}
	}
	if !strings.Contains(output, "ordinary notes") || !strings.Contains(output, "tool-ran") {
		t.Errorf("the readable home lost its ordinary files or tools:\n%s", output)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "src", "new.txt")); err != nil || string(data) != "written\n" {
		t.Errorf("the workspace inside the hidden home is not writable: %q %v\n%s", data, err, output)
	}
	for name, content := range files {
		if data, _ := os.ReadFile(filepath.Join(home, name)); string(data) != content {
			t.Errorf("%s changed: %q", name, data)
		}
	}
}

// A hidden home stays hidden whatever PATH holds: the home itself, a
// folder above it, a link to it, a secret place. Only the folders inside
// it are shown.
func TestSandboxHiddenHomeWhateverPATHHolds(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	home := sandboxtest.OutsideDir(t)
	for name, content := range map[string]string{"notes.txt": "HOME-NOTES", ".ssh/id_rsa": "SSH-KEY", "bin/tool": "#!/bin/sh\necho tool-ran\n"} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	ws := sandboxtest.OutsideDir(t)
	for name, path := range map[string]string{
		"the home":           home,
		"above the home":     filepath.Dir(home),
		"the root":           "/",
		"a link to the home": link,
		"a secret place":     filepath.Join(home, ".ssh"),
	} {
		t.Run(name, func(t *testing.T) {
			path := strings.Join([]string{path, filepath.Join(home, "bin"), "/usr/bin", "/bin"}, ":")
			getenv := func(k string) string { return map[string]string{"HOME": home, "PATH": path}[k] }
			opts := sandbox.Options{Writable: []string{ws}, Home: home, Show: sandbox.ToolFolders(getenv, nil), Kernel: k}
			script := `cat ~/notes.txt ~/.ssh/id_rsa 2>&1; ls -A ~; ~/bin/tool`
			output, _ := runSandboxed(t, sandboxRun{opts: opts, script: script, dir: ws, env: []string{"HOME=" + home}})
			if strings.Contains(output, "HOME-NOTES") || strings.Contains(output, "SSH-KEY") || strings.Contains(output, "notes.txt\n") {
				t.Errorf("PATH holding %s shows the hidden home:\n%s", path, output)
			}
			if !strings.Contains(output, "tool-ran") {
				t.Errorf("the PATH folder inside the home is not shown:\n%s", output)
			}
		})
	}
}

// A secret place the person makes while courier runs (aws configure in
// another terminal during a long watch) is hidden from the next command of
// the same options.
func TestSandboxHidesSecretPlacesMadeLater(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	home := sandboxtest.OutsideDir(t)
	ws := filepath.Join(home, "project")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := sandbox.Options{Writable: []string{ws}, Home: home, HomeReadable: true, Kernel: k}
	run := sandboxRun{opts: opts, script: `cat ~/.aws/credentials ~/.config/gh/hosts.yml 2>&1`, dir: ws, env: []string{"HOME=" + home}}
	if output, _ := runSandboxed(t, run); !strings.Contains(output, "No such file") {
		t.Fatalf("before the secrets exist: %s", output)
	}
	for name, content := range map[string]string{".aws/credentials": "AWS-MADE-LATER", ".config/gh/hosts.yml": "GH-MADE-LATER"} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if output, _ := runSandboxed(t, run); strings.Contains(output, "MADE-LATER") {
		t.Errorf("a command read secrets made after courier started:\n%s", output)
	}
}

func TestSandboxPrivateTemporaryFolders(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	// A file and a socket of the person's in the shared /tmp.
	mine, err := os.MkdirTemp("/tmp", "courier-person-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(mine)
	if err := os.WriteFile(filepath.Join(mine, "note"), []byte("PERSON-TMP-FILE"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := listenUnix(t, filepath.Join(mine, "agent.sock"))
	ws, caches := sandboxtest.OutsideDir(t), t.TempDir()
	opts := sandbox.Options{Writable: []string{ws}, Caches: caches, Session: "s1", Kernel: k}
	script := fmt.Sprintf(`cat %[1]s/note; %[2]s unix %[1]s/agent.sock; echo planted > /tmp/planted; echo $TMPDIR; echo kept > "$TMPDIR/kept"`, mine, dialer(t))
	output, _ := runSandboxed(t, sandboxRun{opts: opts, script: script, dir: ws})
	if strings.Contains(output, "PERSON-TMP-FILE") || len(l.received()) > 0 {
		t.Errorf("the command reached the person's /tmp:\n%s", output)
	}
	if _, err := os.Stat("/tmp/planted"); err == nil {
		os.Remove("/tmp/planted")
		t.Errorf("the command planted a file in the person's /tmp")
	}
	if data, err := os.ReadFile(filepath.Join(opts.TempDir(), "kept")); err != nil || string(data) != "kept\n" {
		t.Errorf("the session's TMPDIR (%s) does not keep what the command wrote: %q %v\n%s", opts.TempDir(), data, err, output)
	}
	// Another session's temporary folder is out of sight.
	other := opts
	other.Session = "s2"
	output, _ = runSandboxed(t, sandboxRun{opts: other, script: `cat "$TMPDIR/../../s1/tmp/kept" 2>/dev/null; ls "$TMPDIR/../.."`, dir: ws})
	if output != "s2\n" {
		t.Errorf("a command sees another session's temporary folder:\n%s", output)
	}
}

func TestSandboxLauncherFailures(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	ws := t.TempDir()
	output, code := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{filepath.Join(ws, "missing")}}, script: "echo ran", dir: ws})
	if code != sandbox.ExitFailure || strings.Contains(output, "ran") || !strings.HasPrefix(output, "courier: error: sandbox: ") {
		t.Errorf("got exit %d with %q, want %d and a courier error line", code, output, sandbox.ExitFailure)
	}
}

func TestProbeFindsTheLayers(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	k := sandboxtest.RequireNamespaces(t)
	abi, _ := sandbox.Available()
	if k.Landlock != abi || !k.Network || !k.Seccomp {
		t.Errorf("Probe = %+v; want landlock %d, a network namespace and the socket filter", k, abi)
	}
}

func TestSandboxCannotReachThePersonsTerminal(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	master, slave := openPTY(t)
	ws := t.TempDir()
	output, _ := runSandboxed(t, sandboxRun{
		opts:   sandbox.Options{Writable: []string{ws}, Kernel: k},
		script: "printf 'INJECTED\\033]52;c;cm0gLXJmIH4=\\a' > " + slave + " && echo wrote",
		dir:    ws,
	})
	time.Sleep(100 * time.Millisecond)
	buf := make([]byte, 256)
	n, _ := syscall.Read(int(master.Fd()), buf) // non-blocking: what is there now
	n = max(n, 0)
	if n > 0 || strings.Contains(output, "wrote") {
		t.Errorf("the command wrote %q to the person's terminal %s: %s", buf[:n], slave, output)
	}
}

// openPTY opens a pseudo-terminal as the person's own shell has one, and
// returns its master and the path of its slave.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	slave := "/dev/pts/" + strconv.Itoa(int(n))
	// Opened once here, so the terminal stays up as a person's would.
	f, err := os.OpenFile(slave, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return master, slave
}

// TestSandboxRootPowers plays a command run by courier as root (common in
// containers) that tries root's powers over the machine. The clock and the
// host name are set to the values they have, so that nothing changes even
// if the sandbox failed; the system calls must still be refused.
func TestSandboxRootPowers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("NOT RUN: this test tries root's powers and needs root (CI runs it as root); an ordinary user's commands hold no capability to begin with")
	}
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	script := `python3 -c '
import fcntl, os, socket, stat, struct, time
def attempt(name, f):
    try:
        f(); print(name, "SUCCEEDED")
    except OSError as e:
        print(name, "refused:", e.strerror)
def same_mtu():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    req = fcntl.ioctl(s, 0x8921, struct.pack("16si12x", b"lo", 0))
    fcntl.ioctl(s, 0x8922, req)
attempt("mknod block device", lambda: os.mknod("sda", stat.S_IFBLK | 0o600, os.makedev(8, 0)))
attempt("mknod char device", lambda: os.mknod("mem", stat.S_IFCHR | 0o600, os.makedev(1, 1)))
attempt("set the clock", lambda: time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME)))
attempt("set the host name", lambda: socket.sethostname(socket.gethostname()))
attempt("configure the network", same_mtu)
attempt("raw packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
attempt("change owner", lambda: os.chown("owned", 1234, 1234))
'`
	for set, k := range layerSets(t) {
		t.Run(set, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "owned"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			output, _ := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, Kernel: k}, script: script, dir: ws})
			if strings.Contains(output, "SUCCEEDED") || strings.Count(output, "refused") != 7 {
				t.Errorf("a command used root's powers:\n%s", output)
			}
			for _, dev := range []string{"sda", "mem"} {
				if _, err := os.Lstat(filepath.Join(ws, dev)); err == nil {
					t.Errorf("a device node %s was made in the workspace", dev)
				}
			}
			var st syscall.Stat_t
			if err := syscall.Stat(filepath.Join(ws, "owned"), &st); err != nil || st.Uid != 0 {
				t.Errorf("a file changed owner: uid %d, %v", st.Uid, err)
			}
			if now, _ := os.Hostname(); now != hostname {
				t.Errorf("the host name changed from %q to %q", hostname, now)
			}
		})
	}
}

// TestSandboxHoldsNoCapabilities checks what the command holds, as root or
// not: the launcher keeps some capabilities for its mounts in the user
// namespace, and none may reach the command.
func TestSandboxHoldsNoCapabilities(t *testing.T) {
	for set, k := range layerSets(t) {
		t.Run(set, func(t *testing.T) {
			ws := t.TempDir()
			output, code := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, Kernel: k}, script: `grep -E '^(Cap|NoNewPrivs)' /proc/self/status`, dir: ws})
			want := "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n"
			if os.Getuid() != 0 && !k.Namespaces {
				// An ordinary user without namespaces holds none but
				// cannot empty the bounding set (it needs CAP_SETPCAP);
				// no_new_privs keeps it from mattering.
				want = strings.Replace(want, "CapBnd:\t0000000000000000\n", "", 1)
				output = regexpBnd.ReplaceAllString(output, "")
			}
			if code != 0 || output != want {
				t.Errorf("the command's capabilities (exit %d):\n%s\nwant\n%s", code, output, want)
			}
		})
	}
}

var regexpBnd = regexp.MustCompile(`(?m)^CapBnd:\t[0-9a-f]+\n`)

// ioURingArg makes the test binary, run as a command, try to set up an
// io_uring, through which it could make sockets without socket(2).
const ioURingArg = "try-io-uring-setup"

func ioURingSetup() int {
	params := make([]byte, 120)                                                     // struct io_uring_params, zeroed
	fd, _, errno := syscall.Syscall(425, 4, uintptr(unsafe.Pointer(&params[0])), 0) // io_uring_setup
	if errno != 0 {
		fmt.Println("io_uring refused:", errno)
		return 1
	}
	syscall.Close(int(fd))
	fmt.Println("io_uring created")
	return 0
}

func TestSandboxRefusesIOURing(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The control: the kernel lets this program make one at all.
	if out, _ := exec.Command(exe, ioURingArg).CombinedOutput(); !strings.Contains(string(out), "io_uring created") {
		t.Fatalf("outside the sandbox, io_uring (is kernel.io_uring_disabled set?): %s", out)
	}
	for _, cut := range []bool{false, true} {
		ws := t.TempDir()
		output, _ := runSandboxed(t, sandboxRun{
			opts:   sandbox.Options{Writable: []string{ws}, Show: []string{filepath.Dir(exe)}, NoNetwork: cut, Kernel: k},
			script: exe + " " + ioURingArg,
			dir:    ws,
		})
		if !strings.Contains(output, "io_uring refused: function not implemented") {
			t.Errorf("network cut %v, io_uring: %s", cut, output)
		}
	}
}

// A command's control group bounds everything it starts, and is gone once
// the command has ended.
func TestSandboxCgroupBoundsAndGoes(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	if !k.Cgroup {
		if os.Getuid() == 0 {
			t.Fatalf("root cannot make a control group here: %s", k.CgroupWhy)
		}
		t.Skip("NOT RUN: an ordinary user here gets no control group (" + k.CgroupWhy + "); resource limits bound the command instead (TestRunSandboxedLimits), and CI runs this test as root")
	}
	cg, err := sandbox.NewCgroup(sandbox.Limits{Processes: 20})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	opts := sandbox.Options{Writable: []string{ws}, Limits: sandbox.Limits{Processes: 20, Cgroups: cg.Dirs()}, Kernel: k}
	output, _ := runSandboxed(t, sandboxRun{opts: opts, dir: ws,
		script: `cat /proc/self/cgroup; n=0; while [ $n -lt 40 ]; do sleep 30 & n=$((n+1)); done 2>/dev/null`})
	if cg.Hit() != "processes" {
		t.Errorf("the command did not reach its limit of processes:\n%s", output)
	}
	dirs := cg.Dirs()
	cg.Remove()
	for _, d := range dirs {
		if !strings.Contains(output, filepath.Base(d)) {
			t.Errorf("the command was not in %s:\n%s", d, output)
		}
		if _, err := os.Stat(d); err == nil {
			t.Errorf("the control group %s is left behind", d)
		}
	}
}

// A credential the person makes while a command runs (a login in another
// terminal during a long build) is not in the private home the command
// sees, whatever its name.
func TestSandboxPrivateHomeShowsNothingMadeDuringACommand(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	home, ws := sandboxtest.OutsideDir(t), t.TempDir()
	token := filepath.Join(home, ".config", "some-new-tool", "token")
	made := filepath.Join(ws, "made")
	script := `while [ ! -e made ]; do sleep 0.05; done; cat "$TOKEN" 2>&1; echo "home: $(ls -A ~)"`
	done := make(chan string)
	go func() {
		output, _ := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, Home: home, Kernel: k}, script: script, dir: ws,
			env: []string{"HOME=" + home, "TOKEN=" + token}})
		done <- output
	}()
	time.Sleep(300 * time.Millisecond)
	if err := os.MkdirAll(filepath.Dir(token), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(token, []byte("TOKEN-MADE-DURING-THE-COMMAND"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(made, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	output := <-done
	if strings.Contains(output, "TOKEN-MADE") || !strings.HasSuffix(output, "home: \n") {
		t.Errorf("the command saw what the person made in the home:\n%s", output)
	}
	if !strings.Contains(output, "No such file") {
		t.Errorf("the command did not try:\n%s", output)
	}
}

// A folder on PATH inside the workspace (node_modules/.bin) is in the
// world as part of the workspace; a command that turns it into a link to
// a place of the person's does not bring that place into the next
// command's world.
func TestSandboxPATHFolderInTheWorkspaceShowsNothingElse(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	home := sandboxtest.OutsideDir(t)
	ws := filepath.Join(home, "project")
	private := filepath.Join(home, "Documents")
	tools := filepath.Join(private, "tools") // a tool folder shown inside it
	for _, d := range []string{ws, tools} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(private, "letter.txt"), []byte("PRIVATE-LETTER"), 0o600); err != nil {
		t.Fatal(err)
	}
	// What an earlier command left: the PATH folder made a link.
	if err := os.Symlink(private, filepath.Join(ws, "bin")); err != nil {
		t.Fatal(err)
	}
	opts := sandbox.Options{Writable: []string{ws}, Home: home, Show: []string{tools, filepath.Join(ws, "bin")}, Kernel: k}
	output, _ := runSandboxed(t, sandboxRun{opts: opts, script: `cat bin/letter.txt; cat ` + filepath.Join(private, "letter.txt"), dir: ws})
	if strings.Contains(output, "PRIVATE-LETTER") {
		t.Errorf("a link in the workspace brought a place of the person's into the world:\n%s", output)
	}
}

// The kernel's settings and the SysRq trigger are not the command's to
// write, even when it runs as root. Only opening is tried: a write, were
// it let through, would change the machine.
func TestSandboxMachineSettingsReadOnly(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	ws := t.TempDir()
	script := `for f in /proc/sys/kernel/printk_ratelimit /proc/sysrq-trigger; do if (: >> "$f") 2>/dev/null; then echo "$f opened"; else echo "$f refused"; fi; done`
	output, _ := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, Kernel: k}, script: script, dir: ws})
	if strings.Contains(output, "opened") || strings.Count(output, "refused") != 2 {
		t.Errorf("a command may write the machine's settings:\n%s", output)
	}
}
