package cli

import (
	"os"
	"testing"

	"github.com/courier-agent/courier/internal/sandbox"
)

// TestMain lets the test binary act as courier's sandbox launcher, as
// courier's own main does: probing the kernel starts /proc/self/exe.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecArg {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}
