//go:build !linux

package sandbox

import (
	"fmt"
	"io"
	"syscall"
)

// Main is the sandbox launcher (see the Linux version). Nothing confines
// commands on other systems and Launcher never starts it there, so
// reaching this is a caller's mistake.
func Main(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "courier: error: sandbox: commands can be confined only on linux")
	return ExitFailure
}

// Launcher returns argv as it is: there is no confinement to start it in.
func Launcher(opts Options, argv, env []string) (Launch, error) {
	return Launch{Path: argv[0], Args: argv, Env: env, Attr: &syscall.SysProcAttr{Setsid: true}}, nil
}

// Probe reports that nothing is available.
func Probe() Kernel {
	const why = "not on linux"
	return Kernel{LandlockWhy: why, NamespacesWhy: why, NetworkWhy: why, SeccompWhy: why}
}
