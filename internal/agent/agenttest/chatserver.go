package agenttest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Step is how ChatServer answers one request.
type Step struct {
	Reply string // the assistant message, streamed when the request asks
	// Status, when not 0 or 200, answers with that status and ErrorBody
	// (default: an OpenAI-style error saying "scripted failure").
	Status     int
	ErrorBody  string
	RetryAfter string
	// MidStreamError streams half of Reply, then an error object with this
	// message (vLLM's shape with VLLMError, else OpenAI's), then ends.
	MidStreamError string
	VLLMError      bool
	Stall          bool          // stream half of Reply, then nothing until the client gives up
	KeepAlive      time.Duration // while stalled, a keep-alive comment this often
	Hangup         bool          // close the connection without an answer
	Comments       bool          // keep-alive comments between the chunks
	Gap            time.Duration // between the streamed chunks, as a slow model writes
	NoDone         bool          // no "data: [DONE]" after the last chunk
	Chunk          int           // characters per streamed chunk (default 5)
	Usage          int           // completion tokens reported, 0 for none
	Delay          time.Duration // before the answer, as a model reading a long request
}

// ChatMessage is one message of a request.
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is a request as ChatServer received it.
type ChatRequest struct {
	Header   http.Header
	Path     string
	Model    string        `json:"model"`
	Messages []ChatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
}

// ChatServer is an OpenAI-compatible chat-completions endpoint answering
// from a script, for tests. Its base URL ends in /v1.
type ChatServer struct {
	URL string

	fail    func(format string, args ...any)
	srv     *httptest.Server
	respond func(n int, req ChatRequest) Step
	quit    chan struct{} // closed when the test ends, to end stalled answers
	mu      sync.Mutex
	reqs    []ChatRequest
	aborted int
}

// NewChatServer serves the steps in order, one a request; one more fails
// the test.
func NewChatServer(t testing.TB, steps ...Step) *ChatServer {
	return NewChatServerFunc(t, func(n int, _ ChatRequest) Step {
		if n > len(steps) {
			t.Errorf("chat server: request %d, but only %d are scripted", n, len(steps))
			return Step{Status: http.StatusInternalServerError, ErrorBody: `{"error":{"message":"no more scripted replies"}}`}
		}
		return steps[n-1]
	})
}

// NewChatServerFunc answers request n (from 1) with respond's step.
func NewChatServerFunc(t testing.TB, respond func(n int, req ChatRequest) Step) *ChatServer {
	s := StartChatServer(respond, t.Errorf)
	t.Cleanup(s.Close)
	return s
}

// StartChatServer is NewChatServerFunc without a testing.TB (for scripts):
// fail reports a broken request, Close stops the server.
func StartChatServer(respond func(n int, req ChatRequest) Step, fail func(format string, args ...any)) *ChatServer {
	s := &ChatServer{fail: fail, respond: respond, quit: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close ends stalled answers and stops the server.
func (s *ChatServer) Close() {
	close(s.quit) // first: closing the server waits for its handlers
	s.srv.Close()
}

// Aborted counts the stalled answers the client gave up on.
func (s *ChatServer) Aborted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aborted
}

// Requests returns the requests received so far.
func (s *ChatServer) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.reqs...)
}

func (s *ChatServer) serve(w http.ResponseWriter, r *http.Request) {
	var req ChatRequest
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &req); err != nil {
		s.fail("chat server: request body is not JSON: %v\n%s", err, data)
	}
	req.Header, req.Path = r.Header.Clone(), r.URL.Path
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	step := s.respond(n, req)
	if step.Delay > 0 && !s.pause(r, step.Delay) {
		return
	}
	switch {
	case step.Hangup:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	case step.Status != 0 && step.Status != http.StatusOK:
		body := cmp.Or(step.ErrorBody, `{"error":{"message":"scripted failure","type":"server_error"}}`)
		if step.RetryAfter != "" {
			w.Header().Set("Retry-After", step.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.Status)
		io.WriteString(w, body)
	case req.Stream:
		s.stream(w, r, step)
	default:
		whole(w, req, step)
	}
}

func whole(w http.ResponseWriter, req ChatRequest, step Step) {
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": step.Reply},
		}},
	}
	if step.Usage > 0 {
		resp["usage"] = map[string]any{"completion_tokens": step.Usage}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func (s *ChatServer) stream(w http.ResponseWriter, r *http.Request, step Step) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(text string) {
		io.WriteString(w, text)
		http.NewResponseController(w).Flush()
	}
	reply := []rune(step.Reply)
	if step.MidStreamError != "" || step.Stall {
		reply = reply[:len(reply)/2]
	}
	size := cmp.Or(max(step.Chunk, 0), 5)
	if step.Comments {
		send(": keep-alive\n\n")
	}
	for i := 0; i < len(reply); i += size {
		if i > 0 && step.Gap > 0 && !s.pause(r, step.Gap) {
			return
		}
		piece := string(reply[i:min(i+size, len(reply))])
		send("data: " + chunkJSON(piece, "") + "\n\n")
		if step.Comments {
			send(": PROCESSING\n\n")
		}
	}
	switch {
	case step.Stall:
		var keepAlive <-chan time.Time
		if step.KeepAlive > 0 {
			tick := time.NewTicker(step.KeepAlive)
			defer tick.Stop()
			keepAlive = tick.C
		}
		for {
			select {
			case <-r.Context().Done():
				s.mu.Lock()
				s.aborted++
				s.mu.Unlock()
				return
			case <-s.quit:
				return
			case <-keepAlive:
				send(": keep-alive\n\n")
			}
		}
	case step.MidStreamError != "":
		msg, _ := json.Marshal(step.MidStreamError)
		if step.VLLMError {
			send(fmt.Sprintf(`data: {"object":"error","message":%s,"type":"BadRequestError","code":400}`+"\n\n", msg))
		} else {
			send(fmt.Sprintf(`data: {"error":{"message":%s,"type":"server_error"}}`+"\n\n", msg))
		}
		return
	}
	last := chunkJSON("", "stop")
	if step.Usage > 0 {
		last = strings.TrimSuffix(last, "}") + fmt.Sprintf(`,"usage":{"completion_tokens":%d}}`, step.Usage)
	}
	send("data: " + last + "\n\n")
	if !step.NoDone {
		send("data: [DONE]\n\n")
	}
}

// pause waits d; false when the client or the test went away.
func (s *ChatServer) pause(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.quit:
		return false
	}
}

// chunkJSON is one streamed chunk holding text, or a finish reason.
func chunkJSON(text, finish string) string {
	delta := map[string]any{}
	if text != "" {
		delta["content"] = text
	}
	var reason any
	if finish != "" {
		reason = finish
	}
	data, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": reason}},
	})
	return string(data)
}
