package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the test binary act as courier's sandbox launcher, the way
// courier's main does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ExecArg {
		os.Exit(Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

// requireLandlock fails the test when the kernel lacks the Landlock ABI it
// needs, unless COURIER_TEST_NO_LANDLOCK=1 says that is expected here.
func requireLandlock(t *testing.T, minABI int) {
	t.Helper()
	abi, err := Available()
	if abi >= minABI {
		return
	}
	msg := "this test needs landlock ABI " + strconv.Itoa(minABI) + ", the kernel has " + strconv.Itoa(abi)
	if err != nil {
		msg += " (" + err.Error() + ")"
	}
	if os.Getenv("COURIER_TEST_NO_LANDLOCK") == "1" {
		t.Skip(msg + "; skipped because COURIER_TEST_NO_LANDLOCK=1")
	}
	t.Fatal(msg + "; set COURIER_TEST_NO_LANDLOCK=1 to skip the sandbox tests on such a kernel")
}

// outsideDir returns a new folder the sandbox must not let a command write
// to. t.TempDir() will not do: the temporary folder is writable by design.
func outsideDir(t *testing.T) string {
	t.Helper()
	var bases []string
	if wd, err := os.Getwd(); err == nil {
		bases = append(bases, wd)
	}
	if home, err := os.UserHomeDir(); err == nil {
		bases = append(bases, home)
	}
	for _, base := range bases {
		if underAny(base, tempDirs()) {
			continue
		}
		dir, err := os.MkdirTemp(base, ".courier-sandbox-probe-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Fatalf("no folder outside the temporary folders to probe writes in (tried %v)", bases)
	return ""
}

func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

type sandboxRun struct {
	opts   Options
	script string
	dir    string
	env    []string
}

// runSandboxed runs script with /bin/sh under the sandbox through the real
// re-exec of the test binary, and returns its combined output and exit code.
func runSandboxed(t *testing.T, sr sandboxRun) (string, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sr.opts.Exe = exe
	argv := Command(sr.opts, []string{"/bin/sh", "-c", sr.script})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = sr.dir
	cmd.Env = append(os.Environ(), sr.env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err = cmd.Run()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("run %v: %v", argv, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

func TestCommandRoundTrip(t *testing.T) {
	shell := []string{"/bin/sh", "-c", "echo --rw -- x"}
	tests := []Options{
		{Exe: "/usr/bin/courier"},
		{Exe: "/c", Writable: []string{"/work/ws", "/other dir"}, NoNetwork: true, Strict: true},
		{Exe: "/c", Writable: []string{"--strict"}},
	}
	for _, opts := range tests {
		argv := Command(opts, shell)
		if argv[0] != opts.Exe || argv[1] != ExecArg {
			t.Fatalf("argv %q does not start with the executable and %s", argv, ExecArg)
		}
		got, gotShell, err := parseArgs(argv[2:])
		if err != nil {
			t.Fatalf("parse %q: %v", argv, err)
		}
		opts.Exe = ""
		if !reflect.DeepEqual(got, opts) || !reflect.DeepEqual(gotShell, shell) {
			t.Errorf("round trip of %q gave %+v %q", argv, got, gotShell)
		}
	}
}

func TestMainRejectsBadArguments(t *testing.T) {
	tests := [][]string{
		nil,
		{"--rw"},
		{"--bogus", "--", "/bin/true"},
		{"--rw", "/tmp"},
		{"--"},
	}
	for _, args := range tests {
		var stderr bytes.Buffer
		code := Main(args, &stderr)
		if code != ExitFailure || !strings.HasPrefix(stderr.String(), "courier: error: sandbox: ") {
			t.Errorf("Main(%q) = %d with %q, want %d and a courier error line", args, code, stderr.String(), ExitFailure)
		}
	}
}
