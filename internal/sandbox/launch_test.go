package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/courier-agent/courier/internal/sandbox"
)

// TestMain lets the test binary act as courier's sandbox launcher, the way
// courier's main does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecArg {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

type sandboxRun struct {
	opts   sandbox.Options
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
	argv := sandbox.Command(sr.opts, []string{"/bin/sh", "-c", sr.script})
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
