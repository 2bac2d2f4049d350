//go:build !linux

package sandbox

import (
	"fmt"
	"io"
)

// Main is the sandbox launcher (see the Linux version). Landlock exists only
// on Linux, and shell.Run never re-executes for the sandbox when Available
// reports 0, so reaching this is a caller's mistake.
func Main(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "courier: error: sandbox: landlock needs linux")
	return ExitFailure
}
