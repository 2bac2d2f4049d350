package shell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// paceDelay is how long a read of a command's output waits after the one
// before it emptied the pipe while the command was writing. It must stay
// well below the time a command takes to fill the pipe's room, or the
// command would wait for courier: at pipeSize (1 MB) a command would have
// to print over 5 GB/s.
const paceDelay = 200 * time.Microsecond

// errStopped ends a read that stop interrupted.
var errStopped = errors.New("output pipe closed by courier")

// outputPipe is a pipe a command writes its output into, read by courier
// outside Go's poller, in as few reads as the output allows.
//
// A command printing in small writes (8 KB each from head, cat or a
// pipeline) wakes a reader that keeps up once per write. Through Go's
// poller each write also wakes whichever thread waits in the poller for
// the next timer, even while nothing reads: on a 2-core machine those
// wakeups take more processor time than the copy, and take it from the
// command. So the read end is a plain non-blocking descriptor the poller
// never sees; an empty pipe is waited for with poll(2), which a byte on a
// second pipe interrupts (stop: a closed descriptor would not wake a
// waiting poll). And when a read empties a pipe the command is filling,
// the next read waits paceDelay first and takes what arrived meanwhile at
// once; a pipe whose room could not be widened is not paced, since the
// command would fill its 64 KB before the wait ends.
type outputPipe struct {
	r            int      // read end, non-blocking
	w            *os.File // write end, for the command; closed once it started
	stopR, stopW int
	paced        bool // the pipe was widened
	drained      bool // the last read emptied the pipe
	stopped      atomic.Bool
}

// newOutputPipe makes a pipe for a command's output.
func newOutputPipe() (*outputPipe, error) {
	r, w, err := closeOnExecPipe()
	if err != nil {
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	stopR, stopW, err := closeOnExecPipe()
	if err != nil {
		unix.Close(r)
		unix.Close(w)
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	p := &outputPipe{r: r, w: os.NewFile(uintptr(w), "|output"), stopR: stopR, stopW: stopW}
	// Only the read end is non-blocking: the command's end, a separate
	// open file, blocks as a command expects its output to.
	if err := unix.SetNonblock(r, true); err != nil {
		p.close()
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	p.paced = widenPipe(r)
	return p, nil
}

// Read reads what the command wrote; io.EOF once every writer closed the
// pipe, errStopped after stop.
func (p *outputPipe) Read(b []byte) (int, error) {
	if p.stopped.Load() {
		// Also when output keeps coming: a process that escaped the
		// command's session may print for ever.
		return 0, errStopped
	}
	if len(b) == 0 {
		return 0, nil
	}
	if p.drained {
		pause()
	}
	for {
		n, err := unix.Read(p.r, b)
		switch {
		case n > 0:
			// A read that filled b may have left more behind: the next
			// one goes at once.
			p.drained = p.paced && n < len(b)
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == unix.EINTR:
			continue
		case err != unix.EAGAIN:
			return 0, err
		}
		p.drained = false
		if err := p.wait(); err != nil {
			return 0, err
		}
	}
}

// wait waits until the pipe has something to read or no writer, or stop
// was called.
func (p *outputPipe) wait() error {
	fds := []unix.PollFd{{Fd: int32(p.r), Events: unix.POLLIN}, {Fd: int32(p.stopR), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if fds[1].Revents != 0 {
			return errStopped
		}
		return nil
	}
}

// stop ends a Read waiting for output, and makes every later Read fail.
// Safe to call while Read runs.
func (p *outputPipe) stop() {
	p.stopped.Store(true)
	_, _ = unix.Write(p.stopW, []byte{0})
}

// close closes every descriptor of the pipe; no Read may run or follow.
func (p *outputPipe) close() {
	if p.w != nil {
		p.w.Close()
	}
	unix.Close(p.r)
	unix.Close(p.stopR)
	unix.Close(p.stopW)
}
