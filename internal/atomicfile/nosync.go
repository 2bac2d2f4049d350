//go:build courier_nofsync

package atomicfile

import "os"

// Sync does nothing in a build with the courier_nofsync tag, which exists
// only to measure what courier's fsyncs cost (go test -tags
// courier_nofsync -bench ...). A courier built this way loses its crash
// guarantees on a power cut; no setting can turn fsync off.
func Sync(*os.File) error { return nil }

const syncing = false
