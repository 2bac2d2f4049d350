package console

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress shows on a terminal what is under way and for how long, so
// that a long build or a slow model does not look like a hang; one line,
// redrawn, cleared at the end.
type progress struct {
	w io.Writer
	// delay keeps quick work from flashing a line; every is the pause
	// between redraws.
	delay, every time.Duration
	mu           sync.Mutex
	done         chan struct{}
	detail       string // what arrived so far
	wg           sync.WaitGroup
}

// start shows what is under way, unless something already is.
func (p *progress) start(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		return
	}
	p.done = make(chan struct{})
	p.detail = ""
	done := p.done
	began := time.Now()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(p.every)
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
				if el := now.Sub(began); el >= p.delay {
					p.mu.Lock()
					detail := p.detail
					p.mu.Unlock()
					if detail != "" {
						detail = "  " + detail
					}
					fmt.Fprintf(p.w, "\r\x1b[K  … %s  %s%s", what, el.Round(time.Second), detail)
					shown = true
				}
			}
		}
	}()
}

func (p *progress) set(detail string) {
	p.mu.Lock()
	p.detail = detail
	p.mu.Unlock()
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
