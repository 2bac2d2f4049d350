// Package syncbuf is a byte buffer that one goroutine may write while
// another reads it: what a test watches courier print while courier runs.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it; the zero value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
