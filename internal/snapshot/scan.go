package snapshot

import (
	"io"
	"os"
	"sync"
	"time"
)

const (
	// racyWindow is how close to a scan a file's timestamps must be for
	// its stat data not to prove its content unchanged next time. Linux
	// file systems stamp times from a clock that ticks every few
	// milliseconds, FAT every 2 seconds; covering both costs no more than
	// reading again the files changed in the last 2 seconds.
	racyWindow = 2 * time.Second
	// maxDepth and maxEntries bound a scan against a command that builds
	// an absurdly deep or large tree: what lies beyond is not snapshotted.
	maxDepth   = 256
	maxEntries = 1 << 20
	// smallFile is the largest content read whole into memory; larger
	// ones are streamed into the store.
	smallFile = 1 << 20
)

// Skipped is a path a scan could not snapshot, and why.
type Skipped struct {
	Path   string
	Reason string
}

// limits is what one turn may still read and store.
type limits struct {
	mu sync.Mutex
	// turnLeft bounds the content a turn reads.
	turnLeft int64
	// budgetLeft bounds the new baseline content a turn stores: content
	// that protects files no command changed may not push the store past
	// its budget, while what commands wrote is stored regardless and the
	// budget is met again by pruning old turns.
	budgetLeft int64
}

// read takes n bytes from what the turn may read.
func (l *limits) read(n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > l.turnLeft {
		return false
	}
	l.turnLeft -= n
	return true
}

// store takes a content of n bytes from what the store may grow by, as
// the disk space its object will take (whole blocks for a file of its
// own, its bytes in a pack); with n 0 it only asks whether there is
// room.
func (l *limits) store(n int64, baseline bool) bool {
	switch {
	case n >= packLimit:
		n = allocated(n + 1)
	case n > 0:
		n += 1 + packEntryCost
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if baseline && n > l.budgetLeft {
		return false
	}
	l.budgetLeft -= n
	return true
}

// scanResult is the workspace as one scan saw it.
type scanResult struct {
	entries []Entry
	skipped []Skipped
	// read counts the content bytes read from the workspace, written the
	// disk space the store grew by.
	read, written int64
}

type job struct {
	path string
	f    *os.File
	size int64
	// baseline content is stored only within the budget.
	baseline bool
}

type readResult struct {
	path string
	hash Hash
	// hashed is set once the content was read; stored once it is in the
	// store (it may have been there already).
	hashed, stored bool
	racy           bool
	read           int64
	written        int64
	err            error
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
