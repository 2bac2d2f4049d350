//go:build unix && !linux

package history

import "golang.org/x/sys/unix"

const oPath = 0

// mkfifoAt: undo does not make FIFOs here, and says so.
func mkfifoAt(int, string, uint32) error { return unix.ENOTSUP }

// syncFS makes everything written durable: without syncfs, all of it.
func syncFS(...string) error {
	unix.Sync()
	return nil
}
