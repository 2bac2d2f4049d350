package serve_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/serve"
)

// A page of another site, a name pointed at this machine (DNS rebinding)
// and a request without the token reach nothing; requests that change
// anything come only from the page itself or a program with the token.
func TestGuard(t *testing.T) {
	s := newServer(t)
	id := s.session("guarded")
	host := strings.TrimPrefix(s.base, "http://")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// The first load sets the cookie and drops the token from the address.
	resp, err := noRedirect.Get(s.base + "/?token=" + s.token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(cookies) != 1 ||
		!cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Value != s.token {
		t.Fatalf("first load: %s %q %+v", resp.Status, resp.Header.Get("Location"), cookies)
	}
	good, bad := cookies[0], &http.Cookie{Name: cookies[0].Name, Value: serve.NewToken()}

	for _, tc := range []struct {
		name, method, path, host, origin, bearer string
		cookie                                   *http.Cookie
		want                                     int
	}{
		{name: "no token", method: "GET", path: "/api/sessions", want: 401},
		{name: "wrong bearer token", method: "GET", path: "/api/sessions", bearer: serve.NewToken(), want: 401},
		{name: "wrong cookie", method: "GET", path: "/api/sessions", cookie: bad, want: 401},
		{name: "wrong token in the address", method: "GET", path: "/?token=" + serve.NewToken(), want: 401},
		{name: "the page's cookie", method: "GET", path: "/api/sessions", cookie: good, want: 200},
		{name: "a program's token", method: "GET", path: "/api/sessions", bearer: s.token, want: 200},
		{name: "localhost", method: "GET", path: "/api/sessions", host: "localhost:1", cookie: good, want: 200},
		{name: "a foreign name (DNS rebinding)", method: "GET", path: "/api/sessions", host: "attacker.example:" + strings.Split(host, ":")[1], cookie: good, want: 421},
		{name: "a foreign name with the token", method: "GET", path: "/api/sessions", host: "attacker.example", bearer: s.token, want: 421},
		{name: "a POST from another page", method: "POST", path: "/api/sessions/" + id + "/say", origin: "http://attacker.example", cookie: good, want: 403},
		{name: "a POST from another port", method: "POST", path: "/api/sessions/" + id + "/say", origin: "http://127.0.0.1:1", cookie: good, want: 403},
		{name: "a POST with the cookie and no Origin", method: "POST", path: "/api/sessions/" + id + "/say", cookie: good, want: 403},
		{name: "a program's POST with another page's Origin", method: "POST", path: "/api/sessions/" + id + "/say", origin: "http://attacker.example", bearer: s.token, want: 403},
		{name: "a POST from the page", method: "POST", path: "/api/sessions/" + id + "/say", origin: s.base, cookie: good, want: 200},
		{name: "a program's POST", method: "POST", path: "/api/sessions/" + id + "/say", bearer: s.token, want: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := url.Values{"text": {"said by " + tc.name}}.Encode()
			req, err := http.NewRequest(tc.method, s.base+tc.path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			if tc.cookie != nil {
				req.AddCookie(tc.cookie)
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body = read(t, resp)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			// Only the page's own script runs: named by its hash, never any
			// inline script.
			if csp := resp.Header.Get("Content-Security-Policy"); !regexp.MustCompile(`script-src 'sha256-[A-Za-z0-9+/=]+';`).MatchString(csp) ||
				strings.Contains(csp, "unsafe") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
		})
	}
	// Only the two requests let in said something.
	request := read(t, s.get("/api/sessions/"+id+"/request"))
	for _, said := range []string{"said by a POST from the page", "said by a program's POST"} {
		if !strings.Contains(request, said) {
			t.Errorf("the request lacks %q", said)
		}
	}
	if n := strings.Count(request, "said by"); n != 2 {
		t.Errorf("the request holds %d messages, want 2:\n%s", n, request)
	}
}

// A body past max_reply is refused before anything of it runs, as a
// reply file past it is.
func TestBodyBounded(t *testing.T) {
	cfg := settings(t.TempDir())
	cfg.Limits.MaxReply = 1000
	s := start(t, cfg, nil)
	id := s.session("bounded")
	for _, size := range []int{1500, 200 << 10} {
		reply := "[CREATE_FILE path=\"big.txt\"]\n" + strings.Repeat("x", size) + "\n[/CREATE_FILE]\n"
		for _, ct := range []string{"text/plain", "multipart/form-data"} {
			var body io.Reader = strings.NewReader(reply)
			contentType := ct
			if ct == "multipart/form-data" {
				b, mct := multipart(t, map[string]string{"reply": reply})
				body, contentType = b, mct
			}
			resp := s.do("POST", "/api/sessions/"+id+"/reply", contentType, body)
			if got := read(t, resp); resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("a %d-byte reply as %s: status %d, want 413: %s", size, ct, resp.StatusCode, got)
			}
		}
	}
	// Whatever the request: a message of 100 KB is refused unread.
	resp := s.post("/api/sessions/"+id+"/say", url.Values{"text": {strings.Repeat("words ", 100<<10/6)}})
	if got := read(t, resp); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 100 KB message: status %d, want 413: %s", resp.StatusCode, got)
	}
	if s.workspaceFile("big.txt") != "" {
		t.Error("big.txt was written")
	}
	var info runner.Info
	s.decode(s.get("/api/sessions/"+id), http.StatusOK, &info)
	if info.Sequence != 1 {
		t.Errorf("the session went on to request %d", info.Sequence)
	}
}

// multipart encodes fields as a browser's form does.
func multipart(t testing.TB, fields map[string]string) (io.Reader, string) {
	var b strings.Builder
	boundary := "courier-test-boundary"
	for k, v := range fields {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", boundary, k, v)
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return strings.NewReader(b.String()), "multipart/form-data; boundary=" + boundary
}

// A client that sends its request slowly (its header, or its body) is cut
// off after the timeout, and nothing of what it sent is done.
func TestSlowClient(t *testing.T) {
	s := start(t, settings(t.TempDir()), func(o *serve.Options) { o.Timeout = 300 * time.Millisecond })
	id := s.session("slow")
	host := strings.TrimPrefix(s.base, "http://")
	reply := "[CREATE_FILE path=\"slow.txt\"]\nslow\n[/CREATE_FILE]\n"
	for name, sent := range map[string]string{
		"header": "GET /api/sessions HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + s.token + "\r\n",
		"body": fmt.Sprintf("POST /api/sessions/%s/reply HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
			id, host, s.token, len(reply), reply[:10]),
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, sent); err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(conn)
			if err != nil {
				t.Fatalf("the connection stayed open: %v (read %q)", err, got)
			}
			if took := time.Since(began); took > 3*time.Second {
				t.Errorf("cut off after %v", took)
			}
			if strings.HasPrefix(string(got), "HTTP/1.1 200") {
				t.Errorf("answered: %q", got)
			}
		})
	}
	if s.workspaceFile("slow.txt") != "" {
		t.Error("the slow reply was applied")
	}
}

// The same answer applied from two tabs at once is applied once; the
// other is refused as applied before.
func TestTwoTabsApplyOnce(t *testing.T) {
	s := newServer(t)
	id := s.session("twice")
	reply := "[RUN_COMMAND]\necho once >> count.txt\n[/RUN_COMMAND]\n"
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Go(func() {
			resp := s.text("/api/sessions/"+id+"/reply", reply)
			read(t, resp)
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	if got := s.workspaceFile("count.txt"); got != "once\n" {
		t.Errorf("count.txt holds %q: the command ran more than once", got)
	}
	if codes[0]+codes[1] != http.StatusOK+http.StatusConflict {
		t.Errorf("statuses %v, want one 200 and one 409", codes)
	}
	var log struct{ Turns []history.TurnLog }
	s.decode(s.get("/api/sessions/"+id+"/log"), http.StatusOK, &log)
	if len(log.Turns) != 1 {
		t.Errorf("%d turns, want 1", len(log.Turns))
	}
}

// A reply to a session another courier holds ('courier watch') is left in
// inbox/ for it, as a file saved there would be, and is not applied here.
func TestHandOverToTheHolder(t *testing.T) {
	s := newServer(t)
	id := s.session("held")
	held, err := runner.New(s.cfg).Hold(id, "courier watch")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	reply := "[CREATE_FILE path=\"handed.txt\"]\nhanded\n[/CREATE_FILE]\n"
	resp := s.text("/api/sessions/"+id+"/reply", reply)
	if body := read(t, resp); resp.StatusCode != http.StatusAccepted || !strings.Contains(body, "courier watch") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	waiting, err := inbox.Pending(s.cfg.Paths.Inbox)
	if err != nil || len(waiting) != 1 {
		t.Fatalf("inbox holds %v (%v), want the reply", waiting, err)
	}
	if data, _ := os.ReadFile(waiting[0]); string(data) != reply || !strings.HasPrefix(filepath.Base(waiting[0]), id) {
		t.Errorf("%s holds %q", waiting[0], data)
	}
	if s.workspaceFile("handed.txt") != "" {
		t.Error("the reply was applied although another courier holds the session")
	}
}

// The events stream tells what the server's turns do, with their session,
// and what another courier process did to a session.
func TestEvents(t *testing.T) {
	s := newServer(t)
	events := s.stream()
	id := s.session("events")
	await(t, events, "sessionStarted", id)
	resp := s.text("/api/sessions/"+id+"/reply", "[RUN_COMMAND]\necho hi\n[/RUN_COMMAND]\n")
	read(t, resp)
	await(t, events, "commandFinished", `"session":"`+id+`"`, `"command":"echo hi"`)
	await(t, events, "turnEnded", `"session":"`+id+`"`, `"sequence":1`)
	// Another courier applies a reply saved into inbox/.
	p, err := inbox.Save(s.cfg.Paths.Inbox, id, "[RUN_COMMAND]\necho there\n[/RUN_COMMAND]\n", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other := runner.New(s.cfg)
	if err := other.ApplyFrom(t.Context(), &inbox.File{Path: p, Inbox: s.cfg.Paths.Inbox}, "", "courier process"); err != nil {
		t.Fatal(err)
	}
	await(t, events, "sessionChanged", `"session":"`+id+`"`, `"sequence":3`)
}

// Everything the page shows from a reply or a command is text: a reply's
// <script>, an attribute it tries to close, a javascript: link and a file
// name made of HTML come out escaped in Review, the turn's results, the
// log, the diff and the lists.
func TestReplyCannotWriteHTML(t *testing.T) {
	s := newServer(t)
	id := s.session("escape")
	evil := `<script>window.pwned=1</script>`
	reply := "[MESSAGE]\n" + evil + ` [click](javascript:window.pwned=2) " onmouseover="window.pwned=3` + "\n[/MESSAGE]\n" +
		"[CREATE_FILE path=\"<img src=x onerror=window.pwned=4>.txt\"]\n" + evil + "\n[/CREATE_FILE]\n" +
		"[RUN_COMMAND]\necho '" + evil + `'; echo '" onmouseover="window.pwned=5'` + "\n[/RUN_COMMAND]\n"
	shown := map[string]string{"review": read(t, s.hxPost("/api/sessions/"+id+"/review", reply))}
	shown["applied"] = read(t, s.hxPost("/api/sessions/"+id+"/reply", reply))
	for _, p := range []string{"/", "/s/" + id, "/api/sessions", "/api/sessions/" + id, "/api/sessions/" + id + "/log", "/api/sessions/" + id + "/diff?turn=1", "/api/sessions/" + id + "/request"} {
		shown[p] = read(t, s.hx(p)) // the whole page for / and /s/ID

	}
	for name, html := range shown {
		for _, bad := range []string{"<script>window", "<img src=x", `" onmouseover="`, `href="javascript`} {
			if strings.Contains(html, bad) {
				t.Errorf("%s holds %s unescaped:\n%s", name, bad, html)
			}
		}
	}
	if !strings.Contains(shown["/api/sessions/"+id], "&lt;script&gt;window.pwned=1&lt;/script&gt;") {
		t.Errorf("the results do not show the command's output as text:\n%s", shown["/api/sessions/"+id])
	}
}

// hx gets what the page gets: the fragment of the page.
func (s *server) hx(path string) *http.Response {
	req, err := http.NewRequest("GET", s.base+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("HX-Request", "true")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// hxPost posts a form of one field, reply, as the page does.
func (s *server) hxPost(path, reply string) *http.Response {
	body, ct := multipart(s.t, map[string]string{"reply": reply})
	req, err := http.NewRequest("POST", s.base+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("HX-Request", "true")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// GET /v1/runs/{id} says where a run stands: the approval it waits on,
// then completed once resumed; a chat session is no run.
func TestRunStatus(t *testing.T) {
	s := newServer(t)
	var m struct {
		RunID, Status string
		Events        []struct{ Type, OperationID string }
	}
	s.decode(s.text("/v1/runs", `{"protocolVersion": "1.0", "operations": [{"type": "shell", "id": "s1", "command": "rm -rf build"}]}`), http.StatusOK, &m)
	if m.Status != "awaiting_approval" {
		t.Fatalf("the run is %s", m.Status)
	}
	id := m.RunID
	s.decode(s.get("/v1/runs/"+id), http.StatusOK, &m)
	if m.Status != "awaiting_approval" || len(m.Events) != 1 || m.Events[0].Type != "approvalRequired" || m.Events[0].OperationID != "s1" {
		t.Errorf("GET says %+v", m)
	}
	s.decode(s.text("/v1/runs/"+id+"/resume", `{"approval": {"operationId": "s1", "decision": "denied"}}`), http.StatusOK, &m)
	s.decode(s.get("/v1/runs/"+id), http.StatusOK, &m)
	if m.Status != "completed" || len(m.Events) != 0 {
		t.Errorf("after the resume, GET says %+v", m)
	}
	s.decode(s.get("/v1/runs/"+s.session("a chat")), http.StatusNotFound, nil)
	s.decode(s.get("/v1/runs/00000000"), http.StatusNotFound, nil)
}

// The events stream stays open past the time a request may take to be
// read (the page would otherwise miss what happens while it reconnects).
func TestEventsOutliveTheTimeout(t *testing.T) {
	s := start(t, settings(t.TempDir()), func(o *serve.Options) { o.Timeout = 200 * time.Millisecond })
	events := s.stream()
	time.Sleep(time.Second)
	id := s.session("later")
	await(t, events, "sessionStarted", id)
}

// Review says what needs the person's yes as the turn will: a command
// like one approved "all like it" before runs unasked, and Review says
// that rather than asking; one of another kind still needs approval.
func TestReviewKnowsEarlierApprovals(t *testing.T) {
	s := newServer(t)
	id := s.session("approvals")
	read(t, s.text("/api/sessions/"+id+"/reply", "[RUN_COMMAND]\nrm -rf junk\n[/RUN_COMMAND]\n"))
	read(t, s.post("/api/sessions/"+id+"/approve", url.Values{"all": {"1"}}))
	var items []serve.Reviewed
	s.decode(s.text("/api/sessions/"+id+"/review", "[RUN_COMMAND]\nrm -rf other\n[/RUN_COMMAND]\n[RUN_COMMAND]\ngit reset --hard\n[/RUN_COMMAND]\n"), http.StatusOK, &items)
	if len(items) != 2 {
		t.Fatalf("review: %+v", items)
	}
	if items[0].Approval != "" || !strings.Contains(items[0].Note, "approved all like it") {
		t.Errorf("a command approved all like it before: %+v", items[0])
	}
	if items[1].Approval == "" {
		t.Errorf("a command of another kind: %+v, want it to need approval", items[1])
	}
}
