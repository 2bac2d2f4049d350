package procgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// Attr starts a program in a process group of its own, which the
// console's Ctrl-C does not reach.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Signal ends the program pid and every process it started: Windows has
// no signals to pass on, so any sig ends them, through taskkill, which
// follows the tree of processes.
func Signal(pid int, _ syscall.Signal) error {
	taskkill := filepath.Join(os.Getenv("SystemRoot"), "System32", "taskkill.exe")
	return exec.Command(taskkill, "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
}

// SignalName names a signal; no program ends by one here.
func SignalName(sig syscall.Signal) string { return sig.String() }
