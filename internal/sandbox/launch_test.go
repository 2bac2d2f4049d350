//go:build linux

package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// TestMain lets the test binary act as courier's sandbox launcher, the way
// courier's main does.
func TestMain(m *testing.M) {
	sandboxtest.RunLauncher()
	if len(os.Args) > 1 && os.Args[1] == ioURingArg {
		os.Exit(ioURingSetup())
	}
	if len(os.Args) > 1 && os.Args[1] == kernelObjectsArg {
		os.Exit(tryKernelObjects(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == matrixArg {
		os.Exit(tryEveryChange(os.Args[2:]))
	}
	os.Exit(m.Run())
}

type sandboxRun struct {
	opts   sandbox.Options
	script string
	dir    string
	env    []string
	// args are the script's $1, $2...
	args []string
}

// runSandboxed runs script with /bin/sh under the sandbox through the real
// launcher (this test binary from /proc/self/exe), and returns its combined
// output and exit code.
func runSandboxed(t *testing.T, sr sandboxRun) (string, int) {
	t.Helper()
	if err := sandbox.Prepare(sr.opts); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), sr.env...)
	for k, v := range sandbox.ToolEnv(sr.opts, os.Getenv) {
		env = append(env, k+"="+v)
	}
	l, err := sandbox.Launcher(sr.opts, append([]string{"/bin/sh", "-c", sr.script, "sh"}, sr.args...), env)
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: l.Path, Args: l.Args, Dir: sr.dir, SysProcAttr: l.Attr, Stdin: l.Stdin, Env: l.Env}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err = cmd.Run()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("run %v: %v", l.Args, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}
