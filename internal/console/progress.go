package console

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress shows, on a terminal's stderr, how long the running command has
// taken, so a long build does not look like a hang. It redraws one line
// and clears it when the command ends.
type progress struct {
	w    io.Writer
	mu   sync.Mutex
	done chan struct{}
	wg   sync.WaitGroup
}

// progressDelay keeps quick commands from flashing a progress line.
const progressDelay = 2 * time.Second

func (p *progress) start(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		return
	}
	p.done = make(chan struct{})
	done := p.done
	began := time.Now()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(p.w, "\r\x1b[K")
				}
				return
			case now := <-tick.C:
				if el := now.Sub(began); el >= progressDelay {
					fmt.Fprintf(p.w, "\r\x1b[K  … %s  %s", what, el.Round(time.Second))
					shown = true
				}
			}
		}
	}()
}

func (p *progress) stop() {
	p.mu.Lock()
	if p.done != nil {
		close(p.done)
		p.done = nil
	}
	p.mu.Unlock()
	p.wg.Wait()
}
