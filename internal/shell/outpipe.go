package shell

import (
	"fmt"
	"os"
)

// outputPipe is a pipe a command writes its output into, read by courier
// until every writer closed it, or until stop.
type outputPipe struct {
	r *os.File
	w *os.File // for the command; closed once it started
}

// newOutputPipe makes a pipe for a command's output. Both ends are closed
// on exec: the command gets its end only as stdout or stderr.
func newOutputPipe() (*outputPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	return &outputPipe{r: r, w: w}, nil
}

// Read reads what the command wrote; io.EOF once every writer closed the
// pipe, an error after stop.
func (p *outputPipe) Read(b []byte) (int, error) { return p.r.Read(b) }

// stop ends a Read waiting for output, and makes every later Read fail:
// a process that escaped the command's session may print for ever. Safe
// to call while Read runs.
func (p *outputPipe) stop() { p.r.Close() }

// close closes what is left of the pipe; no Read may run or follow.
func (p *outputPipe) close() {
	if p.w != nil {
		p.w.Close()
	}
	p.r.Close()
}
