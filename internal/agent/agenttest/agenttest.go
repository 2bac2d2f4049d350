// Package agenttest gives tests of courier's agent backends real
// counterparts to run against: fakellm, a program built from source that
// plays the LLM behind the command backend (see the fakellm command for
// its settings), and ChatServer, an HTTP server speaking the
// chat-completions protocol from a script, failures included.
package agenttest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const fakellmPackage = "github.com/courier-agent/courier/internal/agent/agenttest/fakellm"

// BuildFakeLLM builds fakellm into dir, once per test package (TestMain),
// and returns its path.
func BuildFakeLLM(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out := filepath.Join(dir, "fakellm")
	if msg, err := exec.Command(goTool, "build", "-o", out, fakellmPackage).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build fakellm: %w\n%s", err, msg)
	}
	return out, nil
}

// Install puts fakellm in a new folder, to be put first on PATH, under
// the name of the program it stands for (claude, codex...).
func Install(t testing.TB, fakellm, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(fakellm, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return dir
}

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
	return NewChatServerFunc(t, Steps(steps, t.Errorf))
}

// Steps answers request n with steps[n-1], and one more with an error,
// which it reports to fail.
func Steps(steps []Step, fail func(format string, args ...any)) func(int, ChatRequest) Step {
	return func(n int, _ ChatRequest) Step {
		if n > len(steps) {
			fail("chat server: request %d, but only %d are scripted", n, len(steps))
			return Step{Status: http.StatusInternalServerError, ErrorBody: `{"error":{"message":"no more scripted replies"}}`}
		}
		return steps[n-1]
	}
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
	usage := ""
	if step.Usage > 0 {
		usage = fmt.Sprintf(`,"usage":{"completion_tokens":%d}`, step.Usage)
	}
	switch {
	case step.Hangup:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	case step.Status != 0 && step.Status != http.StatusOK:
		if step.RetryAfter != "" {
			w.Header().Set("Retry-After", step.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.Status)
		io.WriteString(w, cmp.Or(step.ErrorBody, `{"error":{"message":"scripted failure","type":"server_error"}}`))
	case req.Stream:
		s.stream(w, r, step, usage)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-test","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}]%s}`,
			quote(step.Reply), usage)
	}
}

func (s *ChatServer) stream(w http.ResponseWriter, r *http.Request, step Step, usage string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(text string) {
		io.WriteString(w, text+"\n\n")
		http.NewResponseController(w).Flush()
	}
	chunk := func(delta, finish, usage string) {
		send(`data: {"id":"chatcmpl-test","object":"chat.completion.chunk","choices":[{"index":0,"delta":{` + delta + `},"finish_reason":` + finish + `}]` + usage + `}`)
	}
	reply := []rune(step.Reply)
	if step.MidStreamError != "" || step.Stall {
		reply = reply[:len(reply)/2]
	}
	size := cmp.Or(max(step.Chunk, 0), 5)
	if step.Comments {
		send(": keep-alive")
	}
	for i := 0; i < len(reply); i += size {
		if i > 0 && step.Gap > 0 && !s.pause(r, step.Gap) {
			return
		}
		chunk(`"content":`+quote(string(reply[i:min(i+size, len(reply))])), "null", "")
		if step.Comments {
			send(": PROCESSING")
		}
	}
	switch {
	case step.Stall:
		for {
			select {
			case <-r.Context().Done():
				s.mu.Lock()
				s.aborted++
				s.mu.Unlock()
				return
			case <-s.quit:
				return
			case <-time.After(cmp.Or(step.KeepAlive, time.Hour)):
				send(": keep-alive")
			}
		}
	case step.MidStreamError != "" && step.VLLMError:
		send(`data: {"object":"error","message":` + quote(step.MidStreamError) + `,"type":"BadRequestError","code":400}`)
		return
	case step.MidStreamError != "":
		send(`data: {"error":{"message":` + quote(step.MidStreamError) + `,"type":"server_error"}}`)
		return
	}
	chunk("", `"stop"`, usage)
	if !step.NoDone {
		send("data: [DONE]")
	}
}

// pause waits d; false when the client or the test went away.
func (s *ChatServer) pause(r *http.Request, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
	case <-s.quit:
	}
	return false
}

func quote(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}
