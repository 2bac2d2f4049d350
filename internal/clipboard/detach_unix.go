//go:build unix

package clipboard

import (
	"os/exec"
	"syscall"
)

// detach starts the copy tool in a new session, so the server it leaves
// behind is outside courier's process group and terminal: a Ctrl-C meant
// for courier, or closing the terminal, does not end it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
