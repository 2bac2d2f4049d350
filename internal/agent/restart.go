package agent

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// Defaults of the restart loop, as courier's settings give them.
const (
	DefaultMaxRestarts  = 3
	DefaultRestartPause = 5 * time.Second
)

// RestartPolicy is the protocol's restart loop for one request.
type RestartPolicy struct {
	// MaxRestarts is how many runs of the request may fail before courier
	// gives up (default 3; 1 makes a single attempt).
	MaxRestarts int
	// Pause is the wait between a failed run and the next (default 5s).
	Pause time.Duration
}

// SendWithRestarts sends a request as the protocol's restart loop does:
// a failed run is followed, after the pause, by a new run (a new run
// folder, whose record names the failed one as previous), until a run
// completes, MaxRestarts runs have failed, ctx is done, or a failure no
// restart can fix (a missing program, a refused key, an unknown model)
// happens. Each restart is announced to the request's Observer as an
// EventRestart naming the failed run. The error is the last run's.
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
