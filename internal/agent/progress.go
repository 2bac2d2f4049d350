package agent

import (
	"sync/atomic"
	"time"
)

// EventKind says what an Event reports.
type EventKind int

const (
	// EventStart: the run's folder is written and the agent is starting.
	EventStart EventKind = iota + 1
	// EventProgress: more of the reply arrived (Bytes, Tokens).
	EventProgress
	// EventRetry: the request failed in a way worth retrying (Err); the
	// backend waits Wait, then makes attempt Attempt.
	EventRetry
	// EventEnd: the run is over and its run-info.json final (Status, Err).
	EventEnd
	// EventRestart: the run failed (Err) and the restart loop starts run
	// Attempt of the request after Wait (see SendWithRestarts).
	EventRestart
)

func (k EventKind) String() string {
	switch k {
	case EventStart:
		return "start"
	case EventProgress:
		return "progress"
	case EventRetry:
		return "retry"
	case EventEnd:
		return "end"
	case EventRestart:
		return "restart"
	}
	return "unknown"
}

// Event is what an Observer hears about a run as it happens.
type Event struct {
	Kind    EventKind
	RunID   string
	Agent   string // the agent's type
	Model   string // "" when the backend has none
	Elapsed time.Duration
	Bytes   int64         // bytes of reply received so far
	Tokens  int           // tokens received so far, when the backend knows (0 otherwise)
	Attempt int           // EventRetry, EventRestart: the attempt about to be made (2 for the first retry)
	Wait    time.Duration // EventRetry, EventRestart: the pause before it
	Status  string        // EventEnd: StatusCompleted or StatusFailed
	Err     error         // EventRetry, EventRestart: what failed; EventEnd: why the run failed
}

// Observer hears about runs as they happen, so a console can show the
// agent, its model, the elapsed time and what has arrived. Observe is never
// called concurrently for one run; it should return quickly. It runs on
// the goroutine that sends the request, so a panic in it fails the run.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// progressEvery throttles progress events: a console redraws a few times a
// second, and a JSON log should not get a line per token.
const progressEvery = 200 * time.Millisecond

// reporter sends one run's events to an Observer, with the elapsed time
// and the totals received filled in and progress throttled. The Observer
// is only ever called on the goroutine running the agent, so a panic in it
// is a panic of the run, recovered like any other; only setBytes may be
// called from elsewhere. A nil *reporter reports nothing.
type reporter struct {
	obs      Observer
	base     Event // RunID, Agent, Model
	start    time.Time
	lastSent time.Time
	sent     int64 // bytes at the last progress event, -1 before any
	bytes    atomic.Int64
	tokens   int
	// started, when set, learns the agent process's pid as soon as it
	// runs, so that run-info.json can name it (see Runs).
	started func(pid int)
}

func newReporter(obs Observer, runID, agentType, model string) *reporter {
	return &reporter{
		obs:   obs,
		base:  Event{RunID: runID, Agent: agentType, Model: model},
		start: time.Now(),
		sent:  -1,
	}
}

// event reports e with the totals received so far.
func (r *reporter) event(e Event) {
	if r == nil || r.obs == nil {
		return
	}
	ev := r.base
	ev.Kind, ev.Attempt, ev.Wait, ev.Status, ev.Err = e.Kind, e.Attempt, e.Wait, e.Status, e.Err
	ev.Elapsed = time.Since(r.start)
	ev.Bytes, ev.Tokens = r.bytes.Load(), r.tokens
	r.obs.Observe(ev)
}

// safeEvent reports e, turning a panic of the Observer into an error.
func (r *reporter) safeEvent(e Event) (err error) {
	defer recoverPanic(&err)
	r.event(e)
	return nil
}

// observe passes e to obs, if any, turning a panic into an error.
func observe(obs Observer, e Event) (err error) {
	defer recoverPanic(&err)
	if obs != nil {
		obs.Observe(e)
	}
	return nil
}

// setBytes records the bytes of reply received; safe from any goroutine.
func (r *reporter) setBytes(n int64) {
	if r != nil {
		r.bytes.Store(n)
	}
}

// setTokens records the tokens received.
func (r *reporter) setTokens(n int) {
	if r != nil {
		r.tokens = n
	}
}

// tick sends a progress event when something arrived since the last one,
// at most every progressEvery.
func (r *reporter) tick() {
	if r == nil {
		return
	}
	if now := time.Now(); now.Sub(r.lastSent) >= progressEvery {
		r.progress(now)
	}
}

// flush sends a last progress event when the totals changed.
func (r *reporter) flush() {
	if r != nil {
		r.progress(time.Now())
	}
}

func (r *reporter) progress(now time.Time) {
	if n := r.bytes.Load(); n != r.sent {
		r.sent, r.lastSent = n, now
		r.event(Event{Kind: EventProgress})
	}
}

// processStarted passes the agent process's pid on.
func (r *reporter) processStarted(pid int) {
	if r != nil && r.started != nil {
		r.started(pid)
	}
}
