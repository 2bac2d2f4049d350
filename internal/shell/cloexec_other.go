//go:build !linux

package shell

// markInheritedFiles keeps courier's inherited descriptors from its
// commands (see closeInheritedOnExec).
func markInheritedFiles() { closeInheritedOnExec("/dev/fd") }
