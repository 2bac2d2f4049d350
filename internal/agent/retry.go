package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter is the longest Retry-After courier waits for; a server
// asking for longer fails the run at once.
const maxRetryAfter = 2 * time.Minute

// HTTPOptions tunes the openai backend; each zero field takes its default.
// Requests have no overall timeout: a streamed reply may rightly take
// many minutes.
type HTTPOptions struct {
	// ResponseTimeout bounds the wait for the reply's first data (default
	// 10m: a local model on a CPU may read a long request for minutes).
	ResponseTimeout time.Duration
	// IdleTimeout bounds the wait for more of the reply (default 2m);
	// keep-alive comments do not count.
	IdleTimeout time.Duration
	// Retries of a request failing with 408, 429, 5xx or a connection
	// error before any of the reply arrived (default 4; negative for none).
	Retries int
	// Backoff is the pause before the first retry (default 1s), doubled
	// for each next one up to MaxBackoff (default 30s), with jitter.
	Backoff    time.Duration
	MaxBackoff time.Duration
}

func (o HTTPOptions) withDefaults() HTTPOptions {
	o.ResponseTimeout = cmp.Or(max(o.ResponseTimeout, 0), 10*time.Minute)
	o.IdleTimeout = cmp.Or(max(o.IdleTimeout, 0), 2*time.Minute)
	o.Retries = max(cmp.Or(o.Retries, 4), 0)
	o.Backoff = cmp.Or(max(o.Backoff, 0), time.Second)
	o.MaxBackoff = cmp.Or(max(o.MaxBackoff, 0), 30*time.Second)
	return o
}

// backoff is the pause before retry n (from 1), half of it random, so
// that clients refused at once do not come back at once.
func (o HTTPOptions) backoff(n int) time.Duration {
	d := o.Backoff
	for i := 1; i < n && d < o.MaxBackoff; i++ {
		d *= 2
	}
	half := min(d, o.MaxBackoff) / 2
	return half + rand.N(half+1)
}

// StatusError is an HTTP answer other than 200 from the endpoint.
type StatusError struct {
	Status        int
	Message       string        // the server's own message, cleaned for a terminal
	RetryAfter    time.Duration // the wait the server asked for, if hasRetryAfter
	hasRetryAfter bool
	what          string // what the status means
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return e.what
	}
	return e.what + ": " + e.Message
}

func (e *StatusError) permanent() bool { return !retryableStatus(e.Status) }

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs > 1e7 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// connError is a request that got no HTTP answer: worth a retry.
type connError struct{ err error }

func (e *connError) Error() string { return "could not reach the endpoint: " + e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// retryWait says whether a failed attempt is retried and after which
// pause; an error when the server asks for a longer wait than courier's.
func (o HTTPOptions) retryWait(err error, retry int) (time.Duration, bool, error) {
	var se *StatusError
	var ce *connError
	switch {
	case errors.As(err, &se) && retryableStatus(se.Status) && se.hasRetryAfter:
		if se.RetryAfter > maxRetryAfter {
			return 0, false, fmt.Errorf("%w; the server asks to wait %s before trying again, longer than courier waits (%s)",
				err, se.RetryAfter.Round(time.Second), maxRetryAfter)
		}
		return se.RetryAfter, true, nil
	case errors.As(err, &se) && retryableStatus(se.Status), errors.As(err, &ce):
		return o.backoff(retry), true, nil
	}
	return 0, false, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
