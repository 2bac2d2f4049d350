// Package sandboxtest gives tests of the command sandbox what they share:
// a TestMain that lets the test binary act as courier's sandbox launcher,
// checks that the kernel has Landlock and the namespaces, and a folder
// outside every place a sandboxed command may write to, to try writes in.
package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/sandbox"
)

// Main is the TestMain of a package whose tests run sandboxed commands.
func Main(m *testing.M) {
	RunLauncher()
	os.Exit(m.Run())
}

// RunLauncher acts as the launcher when the test binary is started as one.
func RunLauncher() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecArg {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
}

// SkipEnv=1 lets sandbox tests skip on a kernel without Landlock.
const SkipEnv = "COURIER_TEST_NO_LANDLOCK"

// RequireLandlock fails (see SkipEnv) t without Landlock ABI minABI.
func RequireLandlock(t testing.TB, minABI int) {
	t.Helper()
	abi, err := sandbox.Available()
	if abi >= minABI {
		return
	}
	msg := fmt.Sprintf("this test needs landlock ABI %d, the kernel has %d", minABI, abi)
	if err != nil {
		msg += " (" + err.Error() + ")"
	}
	missing(t, msg, SkipEnv, "the sandbox tests on such a kernel")
}

// NamespacesSkipEnv=1 skips the namespace tests without user namespaces.
const NamespacesSkipEnv = "COURIER_TEST_NO_USERNS"

// RequireNamespaces returns sandbox.Probe's findings, failing t without.
func RequireNamespaces(t testing.TB) sandbox.Kernel {
	t.Helper()
	k := sandbox.Probe(t.TempDir())
	if !k.Namespaces {
		missing(t, "this test needs user, mount and PID namespaces: "+k.NamespacesWhy, NamespacesSkipEnv, "the namespace tests on such a machine")
	}
	return k
}

func missing(t testing.TB, msg, skipEnv, what string) {
	t.Helper()
	if os.Getenv(skipEnv) == "1" {
		t.Skip(msg + "; skipped because " + skipEnv + "=1")
	}
	t.Fatal(msg + "; set " + skipEnv + "=1 to skip " + what)
}

// OutsideDir returns a new folder outside those commands may write.
func OutsideDir(t testing.TB) string {
	t.Helper()
	var bases []string
	if home, err := os.UserHomeDir(); err == nil {
		bases = append(bases, home)
	}
	if wd, err := os.Getwd(); err == nil {
		bases = append(bases, wd)
	}
	for _, base := range bases {
		if under(base, sandbox.TempDirs()) {
			continue
		}
		if dir, err := os.MkdirTemp(base, ".courier-sandbox-probe-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	t.Fatalf("no folder outside the temporary folders to try writes in (tried %v)", bases)
	return ""
}

func under(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool {
		rel, err := filepath.Rel(d, p)
		return err == nil && !strings.HasPrefix(rel, "..")
	})
}
