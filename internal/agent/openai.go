package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/courier-agent/courier/internal/human"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
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

	messages, err := o.messages(runCtx)
	if err != nil {
		return outcome{}, err
	}
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

// messages is the request, after the earlier exchanges that fit the
// history budget.
func (o *backend) messages(runCtx *RunContext) ([]message, error) {
	earlier, err := history(runCtx, o.History-human.Tokens(runCtx.Prompt))
	return append(earlier, message{Role: "user", Content: runCtx.Prompt}), err
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
		err = a.readWhole(&activeReader{r: resp.Body, wd: wd})
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
	a.rep.setBytes(a.out.n)
	a.rep.tick()
	return done, nil
}

// watchdog cancels an attempt whose reply does not come: first allows
// for its beginning (the model reads the request), idle between pieces.
type watchdog struct {
	timer *time.Timer
	idle  time.Duration
	begun atomic.Bool
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

// activeReader feeds the watchdog with each read of a whole answer.
type activeReader struct {
	r  io.Reader
	wd *watchdog
}

func (r *activeReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.wd.alive()
	}
	return n, err
}
