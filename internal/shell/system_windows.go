package shell

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
)

// systemVars are what Windows programs need to start and find their
// folders.
var systemVars = []string{"SYSTEMROOT", "WINDIR", "SYSTEMDRIVE", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE"}

// shellPath finds a POSIX sh, which commands are written for: on PATH, or
// where Git for Windows puts its own.
func shellPath() (string, error) {
	if p, err := exec.LookPath("sh"); err == nil && filepath.IsAbs(p) {
		return p, nil
	}
	p := filepath.Join(os.Getenv("ProgramFiles"), "Git", "bin", "sh.exe")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("no sh.exe to run commands in: install Git for Windows, which brings one, or put another POSIX shell on PATH")
}
