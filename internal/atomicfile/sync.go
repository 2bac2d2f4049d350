//go:build !courier_nofsync

package atomicfile

import "os"

// Sync makes a file's content (or a folder's entries) durable. Every fsync
// courier makes goes through here, so that the benchmarks built with the
// courier_nofsync tag can measure what durability costs.
func Sync(f *os.File) error { return f.Sync() }

// syncing is false only in the courier_nofsync build, where SyncDir and
// SyncAll do not even open what they would sync.
const syncing = true
