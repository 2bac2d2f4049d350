package agent

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

const (
	DefaultMaxRestarts  = 3
	DefaultRestartPause = 5 * time.Second
)

// RestartPolicy is the protocol's restart loop for one request.
type RestartPolicy struct {
	MaxRestarts int           // runs that may fail before courier gives up; 1 makes one attempt
	Pause       time.Duration // between a failed run and the next
}

// SendWithRestarts sends a request with the protocol's restart loop: after
// a failed run and the pause, a new run (whose record names the failed one
// as previous), until one completes, MaxRestarts have failed, ctx is done
// or a failure no restart can fix happens. Each restart is an EventRestart
// naming the failed run; the error is the last run's.
func (r Runs) SendWithRestarts(ctx context.Context, a Agent, req Request, p RestartPolicy) (Reply, error) {
	p.MaxRestarts = cmp.Or(max(p.MaxRestarts, 0), DefaultMaxRestarts)
	p.Pause = cmp.Or(max(p.Pause, 0), DefaultRestartPause)
	for n := 1; ; n++ {
		reply, err := r.Send(ctx, a, req)
		if err == nil || ctx.Err() != nil || permanent(err) {
			return reply, err
		}
		if n >= p.MaxRestarts {
			return reply, fmt.Errorf("%d runs failed, the last: %w", n, err)
		}
		rep := newReporter(req.Observer, reply.RunID, a.Type(), reply.Info.Model)
		if oerr := rep.safeEvent(Event{Kind: EventRestart, Attempt: n + 1, Wait: p.Pause, Err: err}); oerr != nil {
			return reply, oerr
		}
		if err := sleep(ctx, p.Pause); err != nil {
			return reply, fmt.Errorf("stopped before restarting: %w", err)
		}
	}
}
