//go:build linux

package sandbox_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// matrixArg makes the test binary, run as a command, try every call that
// changes the file system on each place named after it, and read the
// files named after "--read". It prints one line per call: "PLACE CALL
// ok" or "PLACE CALL refused: ERROR".
const matrixArg = "try-every-change"

// changes are the calls that change a place. Each takes the place (a
// folder or a file) and makes or changes what it names there.
var changes = []struct {
	name string
	call func(place string, dir bool) error
}{
	{"open for writing", func(p string, dir bool) error { return closeFD(unix.Open(fileIn(p, dir, "f"), unix.O_WRONLY, 0)) }},
	{"create", func(p string, dir bool) error {
		return closeFD(unix.Open(newIn(p, dir, "created"), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644))
	}},
	{"truncate", func(p string, dir bool) error { return unix.Truncate(fileIn(p, dir, "f"), 0) }},
	{"link", func(p string, dir bool) error { return unix.Link(fileIn(p, dir, "f"), newIn(p, dir, "linked")) }},
	{"rename", func(p string, dir bool) error {
		return unix.Rename(fileIn(p, dir, "created"), newIn(p, dir, "renamed"))
	}},
	{"unlink", func(p string, dir bool) error { return unix.Unlink(fileIn(p, dir, "f")) }},
	{"symlink", func(p string, dir bool) error { return unix.Symlink("/etc/passwd", newIn(p, dir, "symlinked")) }},
	{"mkdir", func(p string, dir bool) error { return unix.Mkdir(newIn(p, dir, "made"), 0o755) }},
	{"rmdir", func(p string, dir bool) error { return unix.Rmdir(filepath.Join(p, "empty")) }},
	{"chmod", func(p string, dir bool) error { return unix.Chmod(p, 0o4777) }},
	{"chown", func(p string, dir bool) error { return unix.Chown(p, os.Getuid(), os.Getgid()) }},
	{"utimes", func(p string, dir bool) error {
		return unix.UtimesNano(p, []unix.Timespec{unix.NsecToTimespec(0), unix.NsecToTimespec(0)})
	}},
	{"setxattr", func(p string, dir bool) error { return unix.Setxattr(p, "user.courier", []byte("x"), 0) }},
	{"removexattr", func(p string, dir bool) error { return unix.Removexattr(p, "user.courier") }},
	{"mknod", func(p string, dir bool) error { return unix.Mknod(newIn(p, dir, "node"), unix.S_IFREG|0o644, 0) }},
	{"mkfifo", func(p string, dir bool) error { return unix.Mkfifo(newIn(p, dir, "fifo"), 0o644) }},
	{"bind a socket", func(p string, dir bool) error {
		l, err := net.Listen("unix", newIn(p, dir, "sock"))
		if err == nil {
			l.Close()
		}
		return err
	}},
}

// fileIn is the file a call changes: the place itself, or its file f.
func fileIn(place string, dir bool, name string) string {
	if dir {
		return filepath.Join(place, name)
	}
	return place
}

// newIn is a name a call makes: in the folder, or beside the file.
func newIn(place string, dir bool, name string) string {
	if dir {
		return filepath.Join(place, name)
	}
	return place + "." + name
}

func closeFD(fd int, err error) error {
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// tryEveryChange is the command's side of the matrix.
func tryEveryChange(args []string) int {
	places, reads, _ := strings.Cut(strings.Join(args, "\x00"), "\x00--read\x00")
	for _, p := range strings.Split(places, "\x00") {
		info, err := os.Stat(p)
		dir := err == nil && info.IsDir()
		for _, c := range changes {
			if err := c.call(p, dir); err != nil {
				fmt.Printf("%s %s refused: %v\n", p, c.name, err)
			} else {
				fmt.Printf("%s %s ok\n", p, c.name)
			}
		}
	}
	for _, p := range strings.Split(reads, "\x00") {
		if data, err := os.ReadFile(p); err == nil && len(data) > 0 {
			fmt.Printf("%s read: %q\n", p, data)
		}
	}
	return 0
}

// place is a folder of the person's as a test makes it: a file f, an empty
// folder, an attribute on the folder.
func makePlace(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("the person's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// tmpfs before 6.6 takes no user attributes; the call is still tried.
	_ = unix.Setxattr(dir, "user.kept", []byte("kept"), 0)
	return dir
}

// state is everything a change could alter in a place: each entry's name,
// kind, mode, owner, size, times, content and attributes.
func state(t *testing.T, place string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.WalkDir(place, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p, err)
			return nil
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p, err)
			return nil
		}
		fmt.Fprintf(&b, "%s mode %o uid %d gid %d size %d mtime %d.%d", p, st.Mode, st.Uid, st.Gid, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " sha %x", sha256.Sum256(data))
		}
		buf := make([]byte, 1024)
		if n, err := unix.Llistxattr(p, buf); err == nil {
			fmt.Fprintf(&b, " xattrs %q", buf[:n])
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// TestSandboxAttackMatrix plays a command that tries every call that
// changes a file on each kind of place outside what it may write, and
// reads what must stay hidden: every call fails, every place is unchanged,
// and no secret is read. It runs with the private home (the default) and a
// readable one, as root and (in CI) as an ordinary user.
func TestSandboxAttackMatrix(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	k := sandboxtest.RequireNamespaces(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, readable := range []bool{false, true} {
		t.Run(fmt.Sprintf("readable home %v", readable), func(t *testing.T) {
			home := sandboxtest.OutsideDir(t)
			root := sandboxtest.OutsideDir(t)   // this courier root
			other := sandboxtest.OutsideDir(t)  // another courier root of the person's
			shown := sandboxtest.OutsideDir(t)  // a place read_only shows, as courier's binary's folder is
			person := sandboxtest.OutsideDir(t) // the person's Go build cache
			ws := filepath.Join(root, "workspace")
			caches := filepath.Join(root, "cache")
			for _, d := range []string{ws, filepath.Join(home, ".ssh"), filepath.Join(other, "sessions", "x")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			secrets := map[string]string{
				filepath.Join(home, ".ssh", "id_ed25519"):          "HOME-SSH-KEY",
				filepath.Join(other, "sessions", "x", "prompt.md"): "OTHER-ROOT-CONVERSATION",
				filepath.Join(root, "sessions", "s1", "state"):     "OWN-SESSION-STATE",
			}
			for p, content := range secrets {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			places := []string{
				makePlace(t, filepath.Join(home, "files")),
				makePlace(t, filepath.Join(other, "cache")),
				makePlace(t, filepath.Join(root, "sessions")),
				makePlace(t, shown),
				makePlace(t, person),
				"/usr/bin", "/etc/hostname", "/etc",
			}
			opts := sandbox.Options{
				Writable: []string{ws}, Home: home, HomeReadable: readable,
				Show:   []string{shown, filepath.Dir(exe), filepath.Join(home, "files")},
				Hide:   []string{filepath.Join(root, "sessions"), filepath.Join(other, "sessions"), filepath.Join(other, "cache"), caches},
				Caches: caches, Session: "s1", Tools: []sandbox.Cache{{Name: "go-build", Env: "GOCACHE", Person: person}},
				Kernel: k,
			}
			if err := sandbox.Prepare(opts); err != nil {
				t.Fatal(err)
			}
			// A link a command of this session planted in its own cache
			// layer, to a place of the person's.
			planted := filepath.Join(caches, "sessions", "s1", "xdg", "planted")
			if err := os.Symlink(filepath.Join(home, "files"), planted); err != nil {
				t.Fatal(err)
			}
			before := map[string]string{}
			for _, p := range places {
				before[p] = state(t, p)
			}
			args := append(append([]string{exe, matrixArg}, append(places, planted)...), "--read")
			for p := range secrets {
				args = append(args, p)
			}
			output, _ := runSandboxed(t, sandboxRun{opts: opts, script: `exec "$@"`, dir: ws, args: args})
			calls := 0
			for line := range strings.Lines(output) {
				switch {
				case strings.HasSuffix(line, " ok\n") && !strings.HasPrefix(line, person+" "):
					t.Errorf("a change outside the writable folders went through: %s", line)
				case strings.Contains(line, " read: "):
					t.Errorf("a hidden file was read: %s", line)
				case strings.Contains(line, " refused: "):
					calls++
				}
			}
			// The person's cache is where the command sees it, under the
			// session's layer: the calls may go through, into the layer.
			if want := (len(places) - 1) * len(changes); calls < want {
				t.Errorf("%d calls refused, want at least %d:\n%s", calls, want, output)
			}
			for _, p := range places {
				if after := state(t, p); after != before[p] {
					t.Errorf("%s changed:\nbefore\n%s\nafter\n%s", p, before[p], after)
				}
			}
			for p, content := range secrets {
				if data, err := os.ReadFile(p); err != nil || string(data) != content {
					t.Errorf("%s changed: %q %v", p, data, err)
				}
			}
		})
	}
}

// TestSandboxWhatMustWork is the other side of the matrix: in the
// workspace, the session's caches, /tmp and TMPDIR every one of those
// calls goes through.
func TestSandboxWhatMustWork(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	k := sandboxtest.RequireNamespaces(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := sandboxtest.OutsideDir(t)
	ws, caches := filepath.Join(root, "workspace"), filepath.Join(root, "cache")
	person := makePlace(t, sandboxtest.OutsideDir(t))
	opts := sandbox.Options{Writable: []string{ws}, Show: []string{filepath.Dir(exe)}, Caches: caches, Session: "s1",
		Tools: []sandbox.Cache{{Name: "go-build", Env: "GOCACHE", Person: person}}, Kernel: k}
	if err := sandbox.Prepare(opts); err != nil {
		t.Fatal(err)
	}
	before := state(t, person)
	places := []string{makePlace(t, filepath.Join(ws, "p")), filepath.Join(opts.TempDir(), "p"), "/tmp/p", person}
	script := `mkdir -p "$TMPDIR/p/empty" /tmp/p/empty && echo x > "$TMPDIR/p/f" && echo x > /tmp/p/f && exec "$@"`
	output, _ := runSandboxed(t, sandboxRun{opts: opts, script: script, dir: ws, args: append([]string{exe, matrixArg}, places...)})
	for line := range strings.Lines(output) {
		if strings.Contains(line, " refused: ") {
			t.Errorf("a change the command may make was refused: %s", line)
		}
	}
	if !strings.Contains(output, filepath.Join(ws, "p")+" create ok") {
		t.Errorf("no call reached the workspace:\n%s", output)
	}
	if after := state(t, person); after != before {
		t.Errorf("the person's cache changed under the session's layer:\n%s\nafter\n%s", before, after)
	}
	if _, err := os.Stat(filepath.Join(caches, "sessions", "s1", "go-build", "renamed")); err != nil {
		t.Errorf("the session's layer did not take the cache's changes: %v", err)
	}
}

// kernelObjectsArg makes the test binary, run as a command, reach for the
// person's key (its id first) and shared memory segment (its key second):
// read, change, remove. It prints "CALL ok" or "CALL refused: ERROR".
const kernelObjectsArg = "try-kernel-objects"

func tryKernelObjects(args []string) int {
	keyID, _ := strconv.Atoi(args[0])
	shmKey, _ := strconv.Atoi(args[1])
	say := func(call string, err error) {
		if err != nil {
			fmt.Printf("%s refused: %v\n", call, err)
		} else {
			fmt.Printf("%s ok\n", call)
		}
	}
	buf := make([]byte, 256)
	_, err := unix.KeyctlBuffer(unix.KEYCTL_READ, keyID, buf, 0)
	say("read the key", err)
	_, err = unix.KeyctlBuffer(unix.KEYCTL_UPDATE, keyID, []byte("CHANGED"), 0)
	say("update the key", err)
	_, err = unix.KeyctlInt(unix.KEYCTL_REVOKE, keyID, 0, 0, 0)
	say("revoke the key", err)
	_, err = unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", "courier-person-key", 0)
	say("find the key in the session keyring", err)
	_, err = unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", "courier-person-key", 0)
	say("find the key in the user keyring", err)
	_, err = unix.AddKey("user", "courier-person-key", []byte("PLANTED"), unix.KEY_SPEC_USER_KEYRING)
	say("add a key to the user keyring", err)
	id, err := unix.SysvShmGet(shmKey, 0, 0)
	say("find the shared memory", err)
	if err == nil {
		mem, err := unix.SysvShmAttach(id, 0, 0)
		say("attach the shared memory", err)
		if err == nil {
			copy(mem, "CHANGED")
		}
		_, err = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		say("remove the shared memory", err)
	}
	return 0
}

// TestSandboxPersonsKernelObjects plays a command reaching for a key of
// the person's session keyring and a shared memory segment of theirs,
// both made before courier starts: it finds neither, and both stay as
// they were.
func TestSandboxPersonsKernelObjects(t *testing.T) {
	k := sandboxtest.RequireNamespaces(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	keyID, err := unix.AddKey("user", "courier-person-key", []byte("PERSON-KEY"), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Fatalf("add the person's key: %v", err)
	}
	t.Cleanup(func() { unix.KeyctlInt(unix.KEYCTL_UNLINK, keyID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0) })
	// Every right to its owner too, not only to whoever holds the
	// keyring: only the sandbox then stands between the command and it.
	if err := unix.KeyctlSetperm(keyID, 0x3f3f0000); err != nil {
		t.Fatal(err)
	}
	for set, kernel := range map[string]sandbox.Kernel{"every layer": k, "without namespaces": {Landlock: k.Landlock, Seccomp: k.Seccomp}} {
		t.Run(set, func(t *testing.T) {
			shmKey := 0x0c0e0000 | os.Getpid()&0xfff<<4 | len(set)&0xf
			shmID, err := unix.SysvShmGet(shmKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
			if err != nil {
				t.Fatalf("make the person's shared memory: %v", err)
			}
			t.Cleanup(func() { unix.SysvShmCtl(shmID, unix.IPC_RMID, nil) })
			mem, err := unix.SysvShmAttach(shmID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.SysvShmDetach(mem)
			copy(mem, "PERSON-SHM")
			ws := t.TempDir()
			output, _ := runSandboxed(t, sandboxRun{opts: sandbox.Options{Writable: []string{ws}, Show: []string{filepath.Dir(exe)}, Kernel: kernel}, dir: ws,
				script: `exec "$@"`, args: []string{exe, kernelObjectsArg, strconv.Itoa(keyID), strconv.Itoa(shmKey)}})
			for line := range strings.Lines(output) {
				// Without an IPC namespace the segment is the person's:
				// that fallback is said by courier sandbox check.
				if strings.HasSuffix(line, " ok\n") && !(kernel != k && strings.Contains(line, "shared memory")) {
					t.Errorf("the command reached the person's kernel objects: %s", line)
				}
			}
			if !strings.Contains(output, "read the key refused") {
				t.Errorf("the command did not try:\n%s", output)
			}
			buf := make([]byte, 64)
			if n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, keyID, buf, 0); err != nil || string(buf[:n]) != "PERSON-KEY" {
				t.Errorf("the person's key changed: %q %v", buf[:max(n, 0)], err)
			}
			if kernel == k && string(mem[:10]) != "PERSON-SHM" {
				t.Errorf("the person's shared memory changed: %q", mem[:10])
			}
		})
	}
}
