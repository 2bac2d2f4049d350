//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/courier-agent/courier/internal/procgroup"
)

// Main is never started here: nothing confines commands.
func Main(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "courier: error: sandbox: commands can be confined only on linux")
	return ExitFailure
}

// Launcher returns argv as it is: there is no confinement to start it in.
func Launcher(opts Options, argv, env []string) (Launch, error) {
	return Launch{Path: argv[0], Args: argv, Env: env, Attr: procgroup.Attr()}, nil
}

// NewCgroup says no control group can bound a command here.
func NewCgroup(Limits) (*Cgroup, error) {
	return nil, errors.New("control groups are Linux's")
}

// Probe reports that nothing confines commands here.
func Probe(string) Kernel {
	const why = "not on linux"
	return Kernel{Unconfined: "commands cannot be confined on " + runtime.GOOS,
		LandlockWhy: why, NamespacesWhy: why, NetworkWhy: why, SeccompWhy: why}
}
