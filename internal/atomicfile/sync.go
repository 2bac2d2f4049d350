package atomicfile

import "os"

// Sync makes a file's content (or a folder's entries) durable.
func Sync(f *os.File) error { return f.Sync() }
