package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestBufferWhileWritten reads the buffer while writers add to it: every
// write ends up in it whole (go test -race checks the locking).
func TestBufferWhileWritten(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 400 {
		t.Errorf("%d lines written, want 400", got)
	}
}
