package agent

import (
	"sync/atomic"
	"time"
)

// EventKind says what an Event reports, in the words of runner.RunKind.
type EventKind string

const (
	EventStart    EventKind = "start"    // the run's folder is written and the agent is starting
	EventProgress EventKind = "progress" // more of the reply arrived (Bytes, Tokens)
	EventRetry    EventKind = "retry"    // the request failed (Err); attempt Attempt follows after Wait
	EventEnd      EventKind = "end"      // the run is over and its run-info.json final (Status, Err)
	EventRestart  EventKind = "restart"  // the run failed (Err); the restart loop starts run Attempt after Wait
)

// Event is what a Request's Observer hears about a run as it happens.
type Event struct {
	Kind    EventKind
	RunID   string
	Agent   string // the agent's type
	Model   string // "" when the backend has none
	Elapsed time.Duration
	Bytes   int64         // bytes of reply received so far
	Tokens  int           // tokens received so far, when the backend knows
	Attempt int           // EventRetry, EventRestart: the attempt about to be made (2 for the first retry)
	Wait    time.Duration // EventRetry, EventRestart: the pause before it
	Status  string        // EventEnd: StatusCompleted or StatusFailed
	Err     error         // EventRetry, EventRestart: what failed; EventEnd: why the run failed
}

// progressEvery throttles progress events to what a console redraws.
const progressEvery = 200 * time.Millisecond

// reporter sends one run's events to an observer, totals filled in and
// progress throttled. The observer is called only on the goroutine running
// the agent, so its panic fails the run; only setBytes may be called from
// elsewhere.
type reporter struct {
	obs      func(Event) // nil for none
	base     Event       // RunID, Agent, Model
	start    time.Time
	lastSent time.Time
	sent     int64 // bytes at the last progress event, -1 before any
	bytes    atomic.Int64
	tokens   int
	started  func(pid int) // learns the agent program's pid, for run-info.json
}

func newReporter(obs func(Event), runID, agentType, model string) *reporter {
	return &reporter{obs: obs, base: Event{RunID: runID, Agent: agentType, Model: model}, start: time.Now(), sent: -1}
}

func (r *reporter) event(e Event) {
	if r.obs != nil {
		e.RunID, e.Agent, e.Model = r.base.RunID, r.base.Agent, r.base.Model
		e.Elapsed, e.Bytes, e.Tokens = time.Since(r.start), r.bytes.Load(), r.tokens
		r.obs(e)
	}
}

// safeEvent reports e, turning a panic of the observer into an error.
func (r *reporter) safeEvent(e Event) (err error) {
	defer recoverPanic(&err)
	r.event(e)
	return nil
}

func (r *reporter) setBytes(n int64) { r.bytes.Store(n) }

// tick sends a progress event if something arrived, at most every
// progressEvery; flush sends it now.
func (r *reporter) tick() {
	if time.Since(r.lastSent) >= progressEvery {
		r.flush()
	}
}

func (r *reporter) flush() {
	if n := r.bytes.Load(); n != r.sent {
		r.sent, r.lastSent = n, time.Now()
		r.event(Event{Kind: EventProgress})
	}
}

func (r *reporter) processStarted(pid int) {
	if r.started != nil {
		r.started(pid)
	}
}
