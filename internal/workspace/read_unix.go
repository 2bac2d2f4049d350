//go:build unix

package workspace

import "syscall"

// nonBlock opens files without waiting: a named pipe opened for reading
// would otherwise wait for a writer.
const nonBlock = syscall.O_NONBLOCK
