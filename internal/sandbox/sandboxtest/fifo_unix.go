//go:build unix

package sandboxtest

import (
	"syscall"
	"testing"
)

// Mkfifo makes a named pipe at path, the special file a hostile command
// plants where courier expects a file.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}
