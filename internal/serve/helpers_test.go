package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/serve"
)

// The tests of this package do not run in parallel: a session's lock is
// an flock, which a command started by another test holds a copy of for a
// moment (see the runner's tests).

// server is a real 'courier serve' on a fresh root, listening on the
// loopback: base is its address, token its token.
type server struct {
	t     testing.TB
	cfg   runner.Config
	base  string
	token string
	stop  func()
}

// settings are the runner's settings of a fresh root: courier's defaults,
// commands unconfined (the sandbox has tests of its own), its PATH.
func settings(root string) runner.Config {
	paths := runner.DefaultPaths(root)
	if err := paths.Ensure(); err != nil {
		panic(err)
	}
	d := config.Defaults()
	pol, err := policy.New(d.Policy)
	if err != nil {
		panic(err)
	}
	return runner.Config{
		Paths:     paths,
		Limits:    runner.Limits{MaxReply: d.MaxReply, ListLimit: d.ListLimit, ReadLines: d.ReadLines},
		Commands:  runner.Commands{Timeout: d.CommandTimeout, MaxOutput: d.MaxOutput, Policy: pol, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}},
		FrontEnds: []frontend.FrontEnd{protocol.Tags{}, agentspaces.Chat{}},
	}
}

// start serves cfg until the test ends; change adjusts the options.
func start(t testing.TB, cfg runner.Config, change func(*serve.Options)) *server {
	t.Helper()
	o := serve.Options{Config: cfg, Token: serve.NewToken(), Poll: 50 * time.Millisecond}
	if change != nil {
		change(&o)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.New(ctx, o).Run(ln) }()
	s := &server{t: t, cfg: cfg, base: "http://" + ln.Addr().String(), token: o.Token}
	s.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the server did not stop cleanly: %v", err)
		}
	}
	t.Cleanup(func() {
		if s.stop != nil {
			s.stop()
		}
	})
	return s
}

// newServer serves a fresh root.
func newServer(t *testing.T) *server { return start(t, settings(t.TempDir()), nil) }

// session starts a session through the API and returns its id.
func (s *server) session(task string) string {
	s.t.Helper()
	var got struct{ ID string }
	s.decode(s.post("/api/sessions", url.Values{"task": {task}}), http.StatusCreated, &got)
	return got.ID
}

// do sends a request with the bearer token, as a program does.
func (s *server) do(method, path, contentType string, body io.Reader) *http.Response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

func (s *server) get(path string) *http.Response { return s.do("GET", path, "", nil) }

func (s *server) post(path string, form url.Values) *http.Response {
	return s.do("POST", path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

// text posts a body as it is (a reply, an operations message).
func (s *server) text(path, body string) *http.Response {
	return s.do("POST", path, "text/plain", strings.NewReader(body))
}

// decode reads a JSON answer of the given status into v.
func (s *server) decode(resp *http.Response, status int, v any) {
	s.t.Helper()
	body := read(s.t, resp)
	if resp.StatusCode != status {
		s.t.Fatalf("%s %s: status %d, want %d: %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(body), v); err != nil {
			s.t.Fatalf("%s: %v", body, err)
		}
	}
}

func read(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// workspaceFile reads a file of the default workspace ("" when missing).
func (s *server) workspaceFile(name string) string {
	data, _ := os.ReadFile(filepath.Join(s.cfg.Paths.Workspace, name))
	return string(data)
}

// stream reads /api/events, one event a line ("kind data"), until the
// test ends.
func (s *server) stream() <-chan string {
	s.t.Helper()
	resp := s.get("/api/events")
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("events: %s", resp.Status)
	}
	out := make(chan string, 1000)
	s.t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		kind := ""
		for sc.Scan() {
			line := sc.Text()
			if k, ok := strings.CutPrefix(line, "event: "); ok {
				kind = k
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				out <- kind + " " + d
			}
		}
	}()
	return out
}

// await returns the first event on events holding every one of parts,
// failing the test after 10 seconds.
func await(t testing.TB, events <-chan string, parts ...string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("the event stream ended before an event with %q", parts)
			}
			all := true
			for _, p := range parts {
				all = all && strings.Contains(e, p)
			}
			if all {
				return e
			}
		case <-deadline:
			t.Fatalf("no event with %q within 10 s", parts)
		}
	}
}
