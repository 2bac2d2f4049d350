package agent

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/human"

	"github.com/courier-agent/courier/internal/agent/agenttest"
)

// fastHTTP keeps retries and timeouts short, so the tests do not wait.
var fastHTTP = HTTPOptions{Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, IdleTimeout: 5 * time.Second}

// openAIAgent is the openai backend against srv, reading keys from env.
func openAIAgent(t *testing.T, srv *agenttest.ChatServer, env map[string]string, change ...func(*Spec)) Agent {
	t.Helper()
	spec := Spec{Name: NameOpenAI, Model: "qwen2.5-coder", BaseURL: srv.URL, HTTP: fastHTTP,
		Getenv: func(name string) string { return env[name] }}
	for _, c := range change {
		c(&spec)
	}
	return mustNew(t, spec)
}

const longReply = "Session: 1a2b3c4d\nSequence: 1\n[CREATE_FILE path=\"hello.py\"]\nprint(\"héllo, wörld\")\n[/CREATE_FILE]\n[DONE]\nwrote hello.py\n[/DONE]\n"

func TestOpenAIStreamsTheReplyIntoTheRun(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: longReply, Comments: true, Chunk: 3})
	a := openAIAgent(t, srv, map[string]string{"OPENAI_API_KEY": "sk-local-test-key"})
	obs := &events{}
	req := s.request(1, nil)
	req.Observer = obs.Observe
	reply, err := send(t, s, a, req)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != longReply {
		t.Errorf("reply %q, want %q", reply.Text, longReply)
	}
	dir := s.runDir(reply.RunID)
	if got := readFile(t, filepath.Join(dir, StdoutFile)); got != longReply {
		t.Errorf("stdout %q", got)
	}
	chunks := (len([]rune(longReply)) + 2) / 3
	info := readInfoT(t, dir)
	if info.Status != StatusCompleted || info.HTTPStatus != 200 || info.ExitCode != nil || info.Agent != "openai" ||
		info.Model != "qwen2.5-coder" || info.Tokens != chunks || info.StdoutBytes != int64(len(longReply)) {
		t.Errorf("run-info %+v (want %d tokens)", info, chunks)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-local-test-key" ||
		r.Model != "qwen2.5-coder" || !r.Stream || len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Messages[0].Content != req.Prompt {
		t.Errorf("request %+v", r)
	}
	if end, _ := obs.last(EventEnd); end.Tokens != chunks || end.Bytes != int64(len(longReply)) || end.Model != "qwen2.5-coder" {
		t.Errorf("end event %+v", end)
	}
}

func TestOpenAIWithoutStreaming(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: longReply, Usage: 42})
	a := openAIAgent(t, srv, nil, func(sp *Spec) { sp.NoStream = true })
	reply, err := send(t, s, a, s.request(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != longReply || reply.Info.Tokens != 42 {
		t.Errorf("reply %q, tokens %d", reply.Text, reply.Info.Tokens)
	}
	r := srv.Requests()[0]
	if r.Stream || r.Header.Get("Authorization") != "" {
		t.Errorf("request stream=%v, Authorization %q (no key is set)", r.Stream, r.Header.Get("Authorization"))
	}
}

// TestOpenAIStreamRequestAnsweredWhole: a server that ignores "stream"
// and answers with one JSON object still gives the reply.
func TestOpenAIStreamRequestAnsweredWhole(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServerFunc(t, func(n int, req agenttest.ChatRequest) agenttest.Step {
		return agenttest.Step{Reply: "whole"}
	})
	a := openAIAgent(t, srv, nil, func(sp *Spec) { sp.NoStream = true })
	if reply, err := send(t, s, a, s.request(1, nil)); err != nil || reply.Text != "whole" {
		t.Errorf("reply %q, %v", reply.Text, err)
	}
}

func TestOpenAIBaseURLAndKeyFromTheEnvironment(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: "a"}, agenttest.Step{Reply: "b"})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL + "/", "GROQ_API_KEY": "gsk-from-my-variable", "OPENAI_API_KEY": "sk-not-this-one"}
	a := openAIAgent(t, srv, env, func(sp *Spec) { sp.BaseURL = ""; sp.APIKeyEnv = "GROQ_API_KEY" })
	if _, err := send(t, s, a, s.request(1, nil)); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer gsk-from-my-variable" {
		t.Errorf("Authorization %q", got)
	}
	// The run's Environment comes before the process environment.
	req := s.request(1, map[string]string{"GROQ_API_KEY": "gsk-from-the-run"})
	if _, err := send(t, s, a, req); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "Bearer gsk-from-the-run" {
		t.Errorf("Authorization %q", got)
	}
}

func TestOpenAIRetries(t *testing.T) {
	tests := []struct {
		name     string
		steps    []agenttest.Step
		wantWait func(time.Duration) bool // of the first retry event
	}{
		{"429 with Retry-After seconds", []agenttest.Step{{Status: 429, RetryAfter: "1"}, {Reply: "ok"}},
			func(d time.Duration) bool { return d == time.Second }},
		// The date is set when the subtest runs (see below): 3s ahead, to
		// the second, so the wait it asks for is over 2s then, and still
		// over 1s after a second of a busy machine; no backoff (20ms at
		// most here) comes near that.
		{"503 with Retry-After date", []agenttest.Step{{Status: 503, RetryAfter: "date"}, {Reply: "ok"}},
			func(d time.Duration) bool { return d >= time.Second && d <= 3*time.Second }},
		{"500 then 502 then success", []agenttest.Step{{Status: 500}, {Status: 502}, {Reply: "ok"}},
			func(d time.Duration) bool { return d <= fastHTTP.MaxBackoff }},
		{"408", []agenttest.Step{{Status: 408}, {Reply: "ok"}},
			func(d time.Duration) bool { return d <= fastHTTP.MaxBackoff }},
		{"connection closed", []agenttest.Step{{Hangup: true}, {Reply: "ok"}},
			func(d time.Duration) bool { return d <= fastHTTP.MaxBackoff }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			if tt.steps[0].RetryAfter == "date" {
				tt.steps[0].RetryAfter = time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
			}
			srv := agenttest.NewChatServer(t, tt.steps...)
			obs := &events{}
			req := s.request(1, nil)
			req.Observer = obs.Observe
			reply, err := send(t, s, openAIAgent(t, srv, nil), req)
			if err != nil {
				t.Fatal(err)
			}
			if reply.Text != "ok" || len(srv.Requests()) != len(tt.steps) {
				t.Errorf("reply %q after %d requests, want ok after %d", reply.Text, len(srv.Requests()), len(tt.steps))
			}
			retry, ok := obs.last(EventRetry)
			if !ok || !tt.wantWait(retry.Wait) || retry.Err == nil || retry.Attempt != len(tt.steps) {
				t.Errorf("retry event %+v", retry)
			}
			stderr := readFile(t, filepath.Join(s.runDir(reply.RunID), StderrFile))
			if !strings.Contains(stderr, "courier: attempt 1 failed: ") {
				t.Errorf("stderr does not note the retry: %q", stderr)
			}
		})
	}
}

func TestOpenAIGivesUp(t *testing.T) {
	t.Run("after the retries", func(t *testing.T) {
		s := newSession(t)
		srv := agenttest.NewChatServerFunc(t, func(int, agenttest.ChatRequest) agenttest.Step { return agenttest.Step{Status: 500} })
		a := openAIAgent(t, srv, nil, func(sp *Spec) { sp.HTTP.Retries = 2 })
		_, err := send(t, s, a, s.request(1, nil))
		if err == nil || !strings.Contains(err.Error(), "the endpoint answered 500 Internal Server Error: scripted failure") {
			t.Errorf("err = %v", err)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Errorf("%d requests, want 3 (1 + 2 retries)", n)
		}
	})
	t.Run("Retry-After beyond the limit", func(t *testing.T) {
		s := newSession(t)
		srv := agenttest.NewChatServer(t, agenttest.Step{Status: 429, RetryAfter: "3600"})
		_, err := send(t, s, openAIAgent(t, srv, nil), s.request(1, nil))
		if err == nil || !strings.Contains(err.Error(), "429 Too Many Requests") ||
			!strings.Contains(err.Error(), "asks to wait 1h0m0s before trying again, longer than courier waits (2m0s)") {
			t.Errorf("err = %v", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

// TestOpenAIClearErrors: the statuses a person must fix say what to check
// and are never retried, not even by the restart loop.
func TestOpenAIClearErrors(t *testing.T) {
	tests := []struct {
		status   int
		body     string
		want     string
		wantHint string
	}{
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			"the endpoint refused the API key (401 Unauthorized): Incorrect API key provided", "check the key in OPENAI_API_KEY"},
		{403, `{"error":"model access denied"}`,
			"the endpoint refused the request (403 Forbidden): model access denied", "may use the model 'qwen2.5-coder'"},
		{404, `{"object":"error","message":"The model qwen2.5-coder does not exist.","type":"NotFoundError","code":404}`,
			"the endpoint has no model 'qwen2.5-coder' or no ", "check model and base_url"},
		{400, "context length exceeded \x1b[2J", "the endpoint answered 400 Bad Request: context length exceeded", "longer than the model's context"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			s := newSession(t)
			srv := agenttest.NewChatServerFunc(t, func(int, agenttest.ChatRequest) agenttest.Step {
				return agenttest.Step{Status: tt.status, ErrorBody: tt.body}
			})
			_, err := s.runs.SendWithRestarts(t.Context(), openAIAgent(t, srv, nil), s.request(1, nil), RestartPolicy{MaxRestarts: 3, Pause: time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(fixOf(err), tt.wantHint) {
				t.Fatalf("err = %v (hint %q), want %q (hint %q)", err, fixOf(err), tt.want, tt.wantHint)
			}
			if strings.Contains(err.Error(), "\x1b") {
				t.Errorf("the server's escape codes reach the error: %q", err)
			}
			var se *StatusError
			if !errors.As(err, &se) || se.Status != tt.status {
				t.Errorf("err is not a *StatusError %d", tt.status)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			if n := len(runIDs(t, s.runs)); n != 1 {
				t.Errorf("%d runs, want 1: no restart can fix this", n)
			}
			ids := runIDs(t, s.runs)
			if info := readInfoT(t, s.runDir(ids[0])); info.Status != StatusFailed || info.HTTPStatus != tt.status {
				t.Errorf("run-info %+v", info)
			}
		})
	}
}

func TestOpenAIErrorInTheMiddleOfTheStream(t *testing.T) {
	for _, vllm := range []bool{false, true} {
		s := newSession(t)
		srv := agenttest.NewChatServer(t, agenttest.Step{Reply: longReply, MidStreamError: "upstream overloaded", VLLMError: vllm})
		reply, err := send(t, s, openAIAgent(t, srv, nil), s.request(1, nil))
		if err == nil || !strings.Contains(err.Error(), "the endpoint reported an error in the middle of the reply: upstream overloaded") {
			t.Fatalf("vllm=%v: err = %v", vllm, err)
		}
		if reply.Text != "" || len(srv.Requests()) != 1 {
			t.Errorf("vllm=%v: reply %q after %d requests; a half reply must be neither used nor asked for twice", vllm, reply.Text, len(srv.Requests()))
		}
		dir := s.runDir(reply.RunID)
		if info := readInfoT(t, dir); info.Status != StatusFailed {
			t.Errorf("run-info %+v", info)
		}
		if got := readFile(t, filepath.Join(dir, StdoutFile)); got == "" || !strings.HasPrefix(longReply, got) {
			t.Errorf("stdout %q, want the part that arrived", got)
		}
	}
}

func TestOpenAIStalledStreamFails(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: longReply, Stall: true})
	a := openAIAgent(t, srv, nil, func(sp *Spec) { sp.HTTP.IdleTimeout = 300 * time.Millisecond })
	reply, err := send(t, s, a, s.request(1, nil))
	if err == nil || !strings.Contains(err.Error(), "the endpoint sent no more of the reply for 300ms") {
		t.Fatalf("err = %v", err)
	}
	if reply.Text != "" || len(srv.Requests()) != 1 {
		t.Errorf("reply %q after %d requests", reply.Text, len(srv.Requests()))
	}
}

// TestOpenAISlowStreamIsNotStalled: the idle timeout bounds the silence
// between pieces of the reply, not the whole reply: a model writing
// slowly but steadily is waited for.
func TestOpenAISlowStreamIsNotStalled(t *testing.T) {
	s := newSession(t)
	const slow = "slow but steady"
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: slow, Chunk: 2, Gap: 250 * time.Millisecond})
	a := openAIAgent(t, srv, nil, func(sp *Spec) { sp.HTTP.IdleTimeout = time.Second })
	reply, err := send(t, s, a, s.request(1, nil))
	if err != nil || reply.Text != slow {
		t.Fatalf("reply %q, %v", reply.Text, err)
	}
	// Eight pieces 250ms apart: the whole took longer than the idle
	// timeout, so only the gaps were measured.
	if took := reply.Info.EndTime.Sub(reply.Info.StartTime); took <= time.Second {
		t.Errorf("the stream took %s, not longer than the idle timeout: the test proves nothing", took)
	}
}

// TestOpenAIKeepAlivesAloneDoNotHoldTheRun: a server that keeps the
// connection open with comments but sends no reply, before it began or in
// its middle, fails the run instead of hanging it for ever.
func TestOpenAIKeepAlivesAloneDoNotHoldTheRun(t *testing.T) {
	tests := []struct {
		name string
		step agenttest.Step
		want string
	}{
		{"before the reply", agenttest.Step{Stall: true, KeepAlive: 20 * time.Millisecond},
			"did not answer within 300ms"},
		{"in the middle of the reply", agenttest.Step{Reply: longReply, Stall: true, KeepAlive: 20 * time.Millisecond},
			"the endpoint sent no more of the reply for 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			srv := agenttest.NewChatServer(t, tt.step)
			a := openAIAgent(t, srv, nil, func(sp *Spec) {
				sp.HTTP.ResponseTimeout = 300 * time.Millisecond
				sp.HTTP.IdleTimeout = 300 * time.Millisecond
			})
			reply, err := send(t, s, a, s.request(1, nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if reply.Text != "" || len(srv.Requests()) != 1 {
				t.Errorf("reply %q after %d requests", reply.Text, len(srv.Requests()))
			}
			if info := readInfoT(t, s.runDir(reply.RunID)); info.Status != StatusFailed {
				t.Errorf("run-info %+v", info)
			}
		})
	}
}

func TestOpenAINoResponseFails(t *testing.T) {
	s := newSession(t)
	// A server that takes the request and answers too late.
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: "late", Delay: time.Hour})
	a := openAIAgent(t, srv, nil, func(sp *Spec) { sp.HTTP.ResponseTimeout = 200 * time.Millisecond })
	_, err := send(t, s, a, s.request(1, nil))
	if err == nil || !strings.Contains(err.Error(), "did not answer within 200ms") {
		t.Errorf("err = %v", err)
	}
}

// TestOpenAICancelAbortsTheRequest is Ctrl-C while a reply streams in.
func TestOpenAICancelAbortsTheRequest(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: longReply, Stall: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := s.request(1, nil)
	req.Observer = func(e Event) {
		if e.Kind == EventProgress && e.Bytes > 0 {
			cancel()
		}
	}
	reply, err := s.runs.Send(ctx, openAIAgent(t, srv, nil), req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.Aborted() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the server never saw the request go away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if info := readInfoT(t, s.runDir(reply.RunID)); info.Status != StatusFailed || !strings.Contains(info.Error, "canceled") {
		t.Errorf("run-info %+v", info)
	}
}

func TestOpenAIReplyTooLarge(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: strings.Repeat("x", 5000), Chunk: 100})
	a := openAIAgent(t, srv, nil, func(sp *Spec) { sp.MaxReply = 1024 })
	reply, err := send(t, s, a, s.request(1, nil))
	if err == nil || !strings.Contains(err.Error(), "the reply passed 1 KB; courier stopped it") {
		t.Fatalf("err = %v", err)
	}
	if size := fileSize(filepath.Join(s.runDir(reply.RunID), StdoutFile)); size > 1024 {
		t.Errorf("stdout holds %d bytes", size)
	}
}

func TestOpenAIPanicBecomesAnError(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: longReply})
	req := s.request(1, nil)
	req.Observer = func(e Event) {
		if e.Kind == EventProgress {
			panic("reporter bug")
		}
	}
	reply, err := send(t, s, openAIAgent(t, srv, nil), req)
	if err == nil || !strings.Contains(err.Error(), "agent panic: reporter bug") {
		t.Fatalf("err = %v", err)
	}
	if info := readInfoT(t, s.runDir(reply.RunID)); info.Status != StatusFailed {
		t.Errorf("run-info %+v", info)
	}
}

// TestOpenAIHistory keeps the conversation: earlier completed runs are
// sent as messages, failed ones left out, the oldest dropped first when
// the budget is short.
func TestOpenAIHistory(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServerFunc(t, func(n int, req agenttest.ChatRequest) agenttest.Step {
		if n == 3 {
			return agenttest.Step{Status: 400} // a failed run: not part of the conversation
		}
		return agenttest.Step{Reply: "reply " + string(rune('0'+n))}
	})
	a := openAIAgent(t, srv, nil, func(sp *Spec) { sp.History = 100000 })
	var prompts []string
	for seq := 1; seq <= 4; seq++ {
		req := s.request(seq, nil)
		prompts = append(prompts, req.Prompt)
		_, err := send(t, s, a, req)
		if (err != nil) != (seq == 3) {
			t.Fatalf("request %d: %v", seq, err)
		}
	}
	got := srv.Requests()[3].Messages
	want := []agenttest.ChatMessage{
		{Role: "user", Content: prompts[0]}, {Role: "assistant", Content: "reply 1"},
		{Role: "user", Content: prompts[1]}, {Role: "assistant", Content: "reply 2"},
		{Role: "user", Content: prompts[3]},
	}
	if !slices.Equal(got, want) {
		t.Errorf("messages\n got %q\nwant %q", got, want)
	}

	// A budget with room for the request and one exchange keeps the newest
	// (run 4, completed above).
	one := 2*human.Tokens(prompts[3]) + human.Tokens("reply 4")
	b := openAIAgent(t, srv, nil, func(sp *Spec) { sp.History = one })
	if _, err := send(t, s, b, s.request(4, nil)); err != nil {
		t.Fatal(err)
	}
	got = srv.Requests()[4].Messages
	if len(got) != 3 || got[0].Content != prompts[3] || got[1].Content != "reply 4" {
		t.Errorf("with a small budget: %q", got)
	}
	// By default each request goes alone.
	c := openAIAgent(t, srv, nil)
	if _, err := send(t, s, c, s.request(4, nil)); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[5].Messages; len(got) != 1 {
		t.Errorf("without history: %d messages", len(got))
	}
}

// TestHistorySurvivesARestart: the conversation is read from the run
// folders, so a new agent (a restarted courier) sends it too.
func TestHistorySurvivesARestart(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: "first"}, agenttest.Step{Reply: "second"})
	if _, err := send(t, s, openAIAgent(t, srv, nil, func(sp *Spec) { sp.History = 5000 }), s.request(1, nil)); err != nil {
		t.Fatal(err)
	}
	restarted := openAIAgent(t, srv, nil, func(sp *Spec) { sp.History = 5000 })
	if _, err := send(t, s, restarted, s.request(2, nil)); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Messages; len(got) != 3 || got[1].Content != "first" {
		t.Errorf("messages %q", got)
	}
}

// TestOpenAIStreamWithoutDone: some servers end the stream after the
// finishing chunk without "data: [DONE]".
func TestOpenAIStreamWithoutDone(t *testing.T) {
	s := newSession(t)
	srv := agenttest.NewChatServer(t, agenttest.Step{Reply: "complete", NoDone: true})
	if reply, err := send(t, s, openAIAgent(t, srv, nil), s.request(1, nil)); err != nil || reply.Text != "complete" {
		t.Errorf("reply %q, %v", reply.Text, err)
	}
}
