package cli

import (
	"testing"

	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// TestMain lets the test binary act as courier's sandbox launcher, as
// courier's own main does: probing the kernel starts /proc/self/exe.
func TestMain(m *testing.M) { sandboxtest.Main(m) }
