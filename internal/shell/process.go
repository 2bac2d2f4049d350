package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/courier-agent/courier/internal/inherit"
	"github.com/courier-agent/courier/internal/procgroup"
	"github.com/courier-agent/courier/internal/sandbox"
)

const (
	// killGrace is how long a timed-out or canceled command gets between
	// SIGTERM and SIGKILL to clean up (remove lock files, flush output).
	killGrace = time.Second
	// drainGrace bounds the wait for the output pipe to close once the
	// session is dead, which only a process that left it can delay; ample
	// for a loaded machine's late reader.
	drainGrace = 2 * time.Second
)

// process is a started command: the shell (leader of its own session and
// process group) and the goroutines that copy its output and watch it exit.
type process struct {
	cmd    *exec.Cmd
	pgid   int
	pipes  []*os.File    // the output pipes' read ends, read until drain
	copied chan struct{} // closed when every output copy ends
	exited chan struct{} // closed when the shell has exited (see watchExit)
}

// startProcess starts the command with stdin on /dev/null and stdout and
// stderr on one pipe, so that their output interleaves as it arrives, or
// with two outs on two.
func startProcess(launch sandbox.Launch, dir string, outs ...io.Writer) (*process, error) {
	var readers, writers []*os.File
	for range outs {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(readers, writers)
			return nil, fmt.Errorf("create output pipe: %w", err)
		}
		readers, writers = append(readers, r), append(writers, w)
	}
	cmd := &exec.Cmd{
		Path:        launch.Path,
		Args:        launch.Args,
		Dir:         dir,
		Env:         launch.Env,   // never nil: os/exec would give nil courier's own environment
		Stdin:       launch.Stdin, // the sandbox launcher's options; nil is /dev/null
		Stdout:      writers[0],   // an *os.File is handed to the child as is: no copy goroutine in os/exec
		Stderr:      writers[len(writers)-1],
		SysProcAttr: launch.Attr, // Setsid: a session of its own
	}
	// courier seals its inherited files at start; a program embedding
	// this package may not have.
	inherit.Seal()
	err := cmd.Start()
	// The command holds its own copies of the write ends: courier's must
	// go, or the pipes would never reach end of file.
	closeAll(writers)
	if err != nil {
		closeAll(readers)
		return nil, fmt.Errorf("start %s: %w", launch.Args[0], err)
	}
	p := &process{
		cmd:    cmd,
		pgid:   cmd.Process.Pid, // Setsid makes the shell the group leader
		pipes:  readers,
		copied: make(chan struct{}),
		exited: make(chan struct{}),
	}
	var copies sync.WaitGroup
	for i, r := range readers {
		copies.Go(func() {
			_, _ = io.Copy(outs[i], r) // a read error only ends the capture early
		})
	}
	go func() {
		copies.Wait()
		close(p.copied)
	}()
	go p.watchExit()
	return p, nil
}

func closeAll(files ...[]*os.File) {
	for _, f := range slices.Concat(files...) {
		f.Close()
	}
}

// wait waits for the shell to exit, the timeout, or ctx; then kills what is
// left of the process group, reaps the shell and finishes reading output.
// The result says how it ended.
func (p *process) wait(ctx context.Context, timeout time.Duration) (end Result) {
	var limit <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		limit = t.C
	}
	select {
	case <-p.exited:
	case <-limit:
		end.TimedOut = true
		p.stop()
	case <-ctx.Done():
		end.Canceled = true
		p.stop()
	}
	// Background jobs the shell left behind die with it. On Linux the shell
	// is not reaped yet, so its pid, which is the group and session id,
	// cannot have been reused by an unrelated process.
	p.signalSession(syscall.SIGKILL)
	p.reap()
	p.drain()
	end.ExitCode = p.cmd.ProcessState.ExitCode() // -1 if killed by a signal
	if end.TimedOut || end.Canceled {
		end.ExitCode = -1
	}
	return end
}

// stop ends a running command: SIGTERM to everything it started, then
// SIGKILL after killGrace or as soon as the shell is gone.
func (p *process) stop() {
	p.signalSession(syscall.SIGTERM)
	grace := time.NewTimer(killGrace)
	defer grace.Stop()
	select {
	case <-p.exited:
	case <-grace.C:
	}
	p.signalSession(syscall.SIGKILL)
	<-p.exited
}

func (p *process) signalGroup(sig syscall.Signal) {
	// ESRCH only means the group is already gone.
	_ = procgroup.Signal(p.pgid, sig)
}

// drain waits for the output copy to reach end of file, or gives up after
// drainGrace when a process outside the group still holds the pipe.
func (p *process) drain() {
	grace := time.NewTimer(drainGrace)
	defer grace.Stop()
	select {
	case <-p.copied:
	case <-grace.C:
	}
	// Closing ends a read waiting for output: a process that escaped the
	// session may print for ever.
	closeAll(p.pipes)
	<-p.copied
}
