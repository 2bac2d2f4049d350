package agent

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/courier-agent/courier/internal/human"
)

const defaultBaseURL = "https://api.openai.com/v1"

// maxErrorBody caps what courier reads of an error answer.
const maxErrorBody = 64 << 10

// newOpenAI returns the backend of an OpenAI-compatible chat-completions
// endpoint (ollama, llama.cpp, vLLM, LM Studio, hosted providers).
func newOpenAI(spec Spec) (*backend, error) {
	if spec.Model == "" {
		return nil, setupError(errors.New("the openai agent needs a model"),
			"set model in the [agent] table of courier.toml, or use --model NAME (the server's name of the model)")
	}
	spec.APIKeyEnv = cmp.Or(spec.APIKeyEnv, DefaultAPIKeyEnv)
	if !ValidEnvName(spec.APIKeyEnv) {
		return nil, fmt.Errorf("api_key_env %q is not a variable name", spec.APIKeyEnv)
	}
	base, err := NormalizeBaseURL(cmp.Or(spec.BaseURL, spec.Getenv("OPENAI_BASE_URL"), defaultBaseURL))
	if err != nil {
		return nil, err
	}
	spec.HTTP = spec.HTTP.withDefaults()
	return &backend{Spec: spec, typ: NameOpenAI, baseURL: base}, nil
}

// NormalizeBaseURL checks an endpoint's base URL and trims what people
// paste with it: a trailing slash, the /chat/completions path.
func NormalizeBaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", setupError(fmt.Errorf("base URL %q is not an http or https URL", raw),
			"write it like http://localhost:11434/v1")
	}
	if u.User != nil {
		return "", setupError(fmt.Errorf("base URL %q holds a user name or password", u.Redacted()),
			"put the key in OPENAI_API_KEY (or the variable api_key_env names) instead")
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions")
	u.RawPath = ""
	return strings.TrimRight(u.String(), "/"), nil
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (o *backend) endpoint() string { return o.baseURL + "/chat/completions" }

func (o *backend) request(ctx context.Context, runCtx *RunContext, rep *reporter) (outcome, error) {
	stdoutFile, stderrFile, err := createOutputs(runCtx)
	if err != nil {
		return outcome{}, err
	}
	defer stdoutFile.Close()
	defer stderrFile.Close()
	key := lookupEnv(runCtx, o.Getenv, o.APIKeyEnv)
	secrets := secretsOf(runCtx, o.Getenv, o.APIKeyEnv)

	// The earlier exchanges that fit the history budget, then the request.
	messages, err := history(runCtx, o.History-human.Tokens(runCtx.Prompt))
	if err != nil {
		return outcome{}, err
	}
	messages = append(messages, message{Role: "user", Content: runCtx.Prompt})
	body, _ := json.Marshal(struct {
		Model    string    `json:"model"`
		Messages []message `json:"messages"`
		Stream   bool      `json:"stream"`
	}{o.Model, messages, !o.NoStream})

	stdout := newRedactor(stdoutFile, secrets)
	stderr := newRedactor(&meter{w: stderrFile, limit: stderrLimit, drop: true}, secrets)
	defer stderr.Close()
	a := &attempt{o: o, key: key, body: body, rep: rep,
		out: &meter{w: stdout, limit: o.MaxReply}}
	var res outcome
	for n := 1; ; n++ {
		res, err = a.send(ctx)
		if err == nil || a.started || ctx.Err() != nil {
			break
		}
		wait, retry, waitErr := o.HTTP.retryWait(err, n)
		if waitErr != nil {
			err = waitErr
			break
		}
		if !retry || n > o.HTTP.Retries {
			break
		}
		fmt.Fprintf(stderr, "courier: attempt %d failed: %s; retrying in %s\n", n, redactString(err.Error(), secrets), wait.Round(time.Millisecond))
		rep.event(Event{Kind: EventRetry, Attempt: n + 1, Wait: wait, Err: redactError(err, secrets)})
		if err = sleep(ctx, wait); err != nil {
			break
		}
	}
	_ = stdout.Close()
	rep.flush()
	if err != nil {
		fmt.Fprintf(stderr, "courier: %s\n", redactString(err.Error(), secrets))
		if ctx.Err() != nil {
			err = fmt.Errorf("request stopped: %w", context.Cause(ctx))
		}
		return res, redactError(err, secrets)
	}
	return res, syncReply(stdoutFile)
}

// attempt sends the request, possibly several times.
type attempt struct {
	o       *backend
	key     string
	body    []byte
	rep     *reporter
	out     *meter
	started bool // some of the reply arrived: no retry may send it twice
}

// Causes of the watchdog's cancellation.
var (
	errNoResponse = errors.New("no response")
	errStalled    = errors.New("stalled")
)

func (a *attempt) send(ctx context.Context) (outcome, error) {
	o := a.o
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(actx, http.MethodPost, o.endpoint(), bytes.NewReader(a.body))
	if err != nil {
		return outcome{}, fmt.Errorf("build the request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if !o.NoStream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if a.key != "" {
		req.Header.Set("Authorization", "Bearer "+a.key)
	}
	wd := newWatchdog(o.HTTP.ResponseTimeout, o.HTTP.IdleTimeout, cancel)
	defer wd.timer.Stop()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return outcome{}, a.transportError(ctx, actx, err)
	}
	defer resp.Body.Close()
	res := outcome{httpStatus: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		return res, a.statusError(resp)
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType == "text/event-stream" {
		err = a.readStream(resp.Body, wd)
	} else {
		wd.body = resp.Body
		err = a.readWhole(wd)
	}
	res.tokens = a.rep.tokens
	if err != nil {
		return res, a.transportError(ctx, actx, err)
	}
	return res, nil
}

// transportError explains a failed exchange: the caller's cancellation as
// is, courier's timeouts plainly, anything else as a connection error.
func (a *attempt) transportError(ctx, actx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	switch context.Cause(actx) {
	case errNoResponse:
		return fmt.Errorf("the endpoint %s did not answer within %s", a.o.endpoint(), a.o.HTTP.ResponseTimeout)
	case errStalled:
		return fmt.Errorf("the endpoint sent no more of the reply for %s; courier gave up on it", a.o.HTTP.IdleTimeout)
	}
	if errors.Is(err, errReplyTooLarge) {
		return fmt.Errorf("the reply passed %s; courier stopped it", human.ExactBytes(a.o.MaxReply))
	}
	var se *StatusError
	var me *midStreamError
	if errors.As(err, &se) || errors.As(err, &me) {
		return err
	}
	return &connError{err}
}

// statusError reads an error answer, saying what to check for the
// statuses a person can fix.
func (a *attempt) statusError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	o, code := a.o, resp.StatusCode
	status := fmt.Sprintf("%d %s", code, http.StatusText(code))
	se := &StatusError{Status: code, what: "the endpoint answered " + status}
	if c := (chunk{}); json.Unmarshal(data, &c) == nil && c.errorText() != "" {
		data = []byte(c.errorText())
	}
	se.Message = cleanLine(string(data))
	se.RetryAfter, se.hasRetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	var fix string
	switch code {
	case http.StatusUnauthorized:
		se.what = "the endpoint refused the API key (" + status + ")"
		fix = "check the key in " + o.APIKeyEnv + " (api_key_env names the variable) and that it belongs to " + o.baseURL
	case http.StatusForbidden:
		se.what = "the endpoint refused the request (" + status + ")"
		fix = "check that the key in " + o.APIKeyEnv + " may use the model '" + o.Model + "'"
	case http.StatusNotFound:
		se.what = fmt.Sprintf("the endpoint has no model '%s' or no %s (%s)", o.Model, o.endpoint(), status)
		fix = "check model and base_url in the [agent] table (the base URL usually ends in /v1)"
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		fix = "check the model name; the request may also be longer than the model's context"
	default:
		return se
	}
	return setupError(se, fix)
}

// midStreamError is an error the endpoint reported inside a 200 answer.
type midStreamError struct{ msg string }

func (e *midStreamError) Error() string {
	return "the endpoint reported an error in the middle of the reply: " + e.msg
}

// readStream reads a streamed completion into the reply. Only data events
// feed the watchdog: keep-alive comments alone must not hold the run.
func (a *attempt) readStream(body io.Reader, wd *watchdog) error {
	s := newSSEReader(body)
	finished := false
	for {
		data, err := s.next()
		if errors.Is(err, io.EOF) {
			if finished {
				return nil
			}
			return errors.New("the stream ended before the reply was complete (no [DONE])")
		}
		if err != nil {
			return err
		}
		wd.alive()
		if strings.TrimSpace(data) == "[DONE]" {
			return nil
		}
		chunks, err := decodeChunks(data)
		if err != nil {
			return err
		}
		for i := range chunks {
			if msg := chunks[i].errorText(); msg != "" {
				return &midStreamError{cleanLine(msg)}
			}
			done, err := a.take(&chunks[i], true)
			if err != nil {
				return err
			}
			finished = finished || done
		}
	}
}

// decodeChunks reads the JSON of one event: one chunk, or several from a
// server that leaves out the blank lines between events.
func decodeChunks(data string) ([]chunk, error) {
	var out []chunk
	dec := json.NewDecoder(strings.NewReader(data))
	for dec.More() {
		var c chunk
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("the stream holds something that is not a chat completion chunk: %s", cleanLine(data))
		}
		out = append(out, c)
	}
	return out, nil
}

func (a *attempt) readWhole(body io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(body, a.o.MaxReply*2+maxErrorBody))
	if err != nil {
		return err
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("the answer is not a chat completion: %s", cleanLine(string(data)))
	}
	if msg := c.errorText(); msg != "" {
		return &midStreamError{cleanLine(msg)}
	}
	if len(c.Choices) == 0 {
		return fmt.Errorf("the answer holds no reply: %s", cleanLine(string(data)))
	}
	_, err = a.take(&c, false)
	return err
}

// take writes the text of one chunk to the reply; done reports a finish
// reason. Of several choices, only the first (courier asks for one) counts.
func (a *attempt) take(c *chunk, streamed bool) (bool, error) {
	done := false
	if len(c.Choices) > 0 {
		ch := c.Choices[0]
		text := string(ch.Message.Content)
		if streamed {
			text = string(ch.Delta.Content)
		}
		if text != "" {
			a.started = true
			if _, err := io.WriteString(a.out, text); err != nil {
				return false, err
			}
			if streamed {
				a.rep.tokens++
			}
		}
		done = ch.FinishReason != nil && *ch.FinishReason != ""
	}
	if c.Usage != nil && c.Usage.CompletionTokens > 0 {
		a.rep.tokens = c.Usage.CompletionTokens
	}
	a.rep.bytes.Store(a.out.n)
	a.rep.tick()
	return done, nil
}

// watchdog cancels an attempt whose reply does not come: first allows
// for its beginning (the model reads the request), idle between pieces.
type watchdog struct {
	timer *time.Timer
	idle  time.Duration
	begun atomic.Bool
	body  io.Reader
}

func newWatchdog(first, idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{idle: idle}
	w.timer = time.AfterFunc(first, func() {
		if w.begun.Load() {
			cancel(errStalled)
		} else {
			cancel(errNoResponse)
		}
	})
	return w
}

func (w *watchdog) alive() {
	w.begun.Store(true)
	w.timer.Reset(w.idle)
}

// Read reads a whole answer, each read keeping the watchdog quiet.
func (w *watchdog) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 {
		w.alive()
	}
	return n, err
}

// maxSSELine caps one line of a stream: an endless line must not exhaust
// memory.
const maxSSELine = 4 << 20

// chunk is one JSON object of a chat-completions response: a streamed
// delta, a whole completion, or an error in OpenAI's shape ({"error":
// {"message": ...}}), vLLM's ({"object": "error", "message": ...}) or
// ollama's ({"error": "text"}).
type chunk struct {
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		Delta struct {
			Content messageText `json:"content"`
		} `json:"delta"`
		Message struct {
			Content messageText `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// errorText returns the error a chunk carries, or "".
func (c *chunk) errorText() string {
	var obj struct {
		Message string `json:"message"`
	}
	switch {
	case c.Object == "error":
		return cmp.Or(c.Message, "error")
	case len(c.Error) == 0 || string(c.Error) == "null":
		return ""
	case c.Error[0] == '"':
		var s string
		json.Unmarshal(c.Error, &s)
		return s
	case json.Unmarshal(c.Error, &obj) == nil && obj.Message != "":
		return obj.Message
	}
	return string(c.Error)
}

// messageText is a message's content: a string, null, or a list of parts
// of which the text ones count.
type messageText string

func (m *messageText) UnmarshalJSON(raw []byte) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		*m = messageText(s)
		return nil
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &parts) // else a shape without text
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			*m += messageText(p.Text)
		}
	}
	return nil
}

// sseReader reads the data of server-sent events, skipping comments
// (keep-alives) and other fields.
type sseReader struct{ s *bufio.Scanner }

func newSSEReader(r io.Reader) *sseReader {
	s := bufio.NewScanner(r)
	s.Buffer(nil, maxSSELine)
	return &sseReader{s}
}

// next returns the data of the next event; io.EOF after the last.
func (r *sseReader) next() (string, error) {
	var data []string
	for r.s.Scan() {
		line := r.s.Text()
		if line == "" && len(data) > 0 {
			return strings.Join(data, "\n"), nil
		}
		if field, value, _ := strings.Cut(line, ":"); field == "data" {
			data = append(data, strings.TrimPrefix(value, " "))
		}
	}
	switch err := r.s.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return "", fmt.Errorf("a line of the stream is longer than %s", human.ExactBytes(maxSSELine))
	case err != nil:
		return "", err
	case len(data) > 0:
		return strings.Join(data, "\n"), nil
	}
	return "", io.EOF
}

// maxRetryAfter is the longest Retry-After courier waits for; a server
// asking for longer fails the run at once.
const maxRetryAfter = 2 * time.Minute

// HTTPOptions tunes the openai backend; a zero field takes its default
// (withDefaults). Requests have no overall timeout: a streamed reply may
// rightly take many minutes.
type HTTPOptions struct {
	ResponseTimeout time.Duration // for the reply's first data: a model on a CPU may read a request for minutes
	IdleTimeout     time.Duration // for more of the reply; keep-alive comments do not count
	Retries         int           // of a 408, 429, 5xx or lost connection before any reply arrived; negative for none
	// Backoff is the pause before the first retry, doubled for each next
	// one up to MaxBackoff, with jitter.
	Backoff, MaxBackoff time.Duration
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

// history returns the request and reply of each completed earlier run of
// the session, from the run folders (so it survives a restart), newest
// kept first within budget tokens. A failed run's request is sent again
// anyway.
func history(runCtx *RunContext, budget int) ([]message, error) {
	session := runCtx.Environment[EnvTaskFolder]
	if session == "" || budget <= 0 {
		return nil, nil
	}
	r := Runs{SessionDir: session}
	ids, err := r.ids()
	if err != nil {
		return nil, err
	}
	var out []message
	used := 0
	for _, id := range slices.Backward(ids) {
		if id >= runCtx.RunID {
			continue // this run, or one after it
		}
		dir := filepath.Join(r.Dir(), id)
		info, err := readInfo(dir)
		if err != nil || info.Status != StatusCompleted {
			continue
		}
		prompt, err1 := os.ReadFile(filepath.Join(dir, PromptFile))
		reply, err2 := os.ReadFile(filepath.Join(dir, StdoutFile))
		if err := cmp.Or(err1, err2); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		cost := human.Tokens(string(prompt)) + human.Tokens(string(reply))
		if used+cost > budget {
			break
		}
		used += cost
		out = append([]message{{Role: "user", Content: string(prompt)}, {Role: "assistant", Content: string(reply)}}, out...)
	}
	return out, nil
}
