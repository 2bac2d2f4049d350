// Package serve is 'courier serve': the sessions of one root in a browser
// tab, and the same sessions over HTTP for programs (a JSON API, and the
// Agent Spaces runtime at /v1/runs). It is one more view of the sessions,
// not a mode of its own: each request does what the matching courier
// command does, through the runner, and holds a session only while it
// works on it, so a 'courier watch' in a terminal and the page take turns
// on the same sessions, and what other courier processes do shows on the
// page too.
//
// Every request needs the token, names a loopback host (or an address, not
// a name: DNS rebinding), and, when it changes anything, comes from the
// page itself (its Origin) or from a program with the bearer token. The
// replies, the command output and every file are hostile: the page shows
// them only through html/template, under a policy that runs no script but
// the page's own.
package serve

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

// Options say what the server serves: the config of the runners it builds
// per request, the token every request needs, the bound on reading a
// request (30 s), and how often it looks for what other courier processes
// did (half a second).
type Options struct {
	Config        runner.Config
	Token         string
	Timeout, Poll time.Duration
}

// Server serves one root's sessions.
type Server struct {
	o   Options
	ctx context.Context // turns run in it: a closed tab stops none
	mu  sync.Mutex
	// busy serialises the requests on one session (two tabs applying one
	// answer); lives is each session's last turn as this server saw it;
	// subs are the /api/events streams open.
	busy  map[string]*sync.Mutex
	lives map[string]*live
	subs  map[chan []byte]bool
	// pages and policy: see pages.
	pages  *template.Template
	policy string
}

// New returns a server whose turns run in ctx.
func New(ctx context.Context, o Options) *Server {
	o.Timeout, o.Poll = cmp.Or(o.Timeout, 30*time.Second), cmp.Or(o.Poll, 500*time.Millisecond)
	s := &Server{o: o, ctx: ctx, subs: map[chan []byte]bool{}, busy: map[string]*sync.Mutex{}, lives: map[string]*live{}}
	s.pages, s.policy = pages()
	return s
}

// NewToken returns a token no one can guess.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Run serves on ln until the server's context ends, finishing in the
// background the turns a killed courier left.
func (s *Server) Run(ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.o.Timeout, ReadTimeout: s.o.Timeout, IdleTimeout: 2 * time.Minute}
	var wg sync.WaitGroup
	wg.Go(s.recover)
	wg.Go(s.watch)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-served:
	case <-s.ctx.Done():
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = srv.Shutdown(ctx)
	}
	wg.Wait()
	return err
}

// Handler is the server's HTTP handler, every route behind the guard.
func (s *Server) Handler() http.Handler {
	m := http.NewServeMux()
	for pattern, h := range map[string]func(http.ResponseWriter, *http.Request) error{
		"GET /{$}":                         s.home,
		"GET /s/{id}":                      s.sessionPage,
		"GET /api/sessions":                s.sessions,
		"POST /api/sessions":               s.create,
		"GET /api/sessions/{id}":           s.status,
		"GET /api/sessions/{id}/request":   s.request,
		"POST /api/sessions/{id}/reply":    s.reply,
		"POST /api/sessions/{id}/review":   s.review,
		"POST /api/sessions/{id}/approve":  s.act(s.decide),
		"POST /api/sessions/{id}/deny":     s.act(s.decide),
		"POST /api/sessions/{id}/say":      s.act(s.say),
		"POST /api/sessions/{id}/undo":     s.act(s.undo),
		"POST /api/sessions/{id}/continue": s.act(s.continueTask),
		"GET /api/sessions/{id}/log":       s.log,
		"GET /api/sessions/{id}/diff":      s.diff,
		"POST /v1/runs":                    s.startRun,
		"POST /v1/runs/{id}/resume":        s.resumeRun,
		"GET /v1/runs/{id}":                s.runStatus,
	} {
		m.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				s.fail(w, r, err)
			}
		})
	}
	m.HandleFunc("GET /api/events", s.events)
	return s.guard(m)
}

// guard lets through only requests for this server (Host) with the token
// (cookie or bearer), changing anything only from the page itself (Origin)
// or a program, and bounds their bodies.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", s.policy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !ownHost(r.Host) {
			http.Error(w, "courier serves only requests for its own address", http.StatusMisdirectedRequest)
			return
		}
		bearer := s.is(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		cookie, _ := r.Cookie(s.cookieName())
		switch {
		case bearer || (cookie != nil && s.is(cookie.Value)):
		case r.Method == http.MethodGet && r.URL.Path == "/" && s.is(r.URL.Query().Get("token")):
			// The first load: the token goes into a cookie no other site
			// sends, and out of the address.
			http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		default:
			http.Error(w, "the token is missing or wrong: open the address 'courier serve' printed", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			origin := r.Header.Get("Origin")
			if (origin == "" && !bearer) || (origin != "" && origin != "http://"+r.Host) {
				http.Error(w, "a request from another page changes nothing here", http.StatusForbidden)
				return
			}
		}
		limit := s.o.Config.Limits.MaxReply + formRoom
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			limit = agentspaces.MaxMessageBytes + 1
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// formRoom is what a form adds around the reply it carries.
const formRoom = 64 << 10

func (s *Server) is(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.o.Token)) == 1
}

// cookieName is per server: cookies do not tell ports apart.
func (s *Server) cookieName() string { return "courier-" + s.o.Token[:8] }

// ownHost reports whether Host is localhost or an address: another name
// is a site made to point here (DNS rebinding).
func ownHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	return strings.EqualFold(host, "localhost") || net.ParseIP(host) != nil
}

// hold serialises the requests on session id until the returned call.
func (s *Server) hold(id string) func() {
	s.mu.Lock()
	m, ok := s.busy[id]
	if !ok {
		m = &sync.Mutex{}
		s.busy[id] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// recover finishes the turns and undos a killed courier left, as
// 'courier process' would.
func (s *Server) recover() {
	infos, _ := runner.New(s.o.Config).Sessions()
	for _, i := range infos {
		if (i.State != runner.StateApplying && i.State != runner.StateUndoing) || i.Holder != nil || i.Run {
			continue
		}
		func() {
			defer s.hold(i.ID)()
			rr, rep := s.runner(i.ID)
			sess, err := rr.Hold(i.ID, "courier serve")
			if err != nil {
				return
			}
			defer sess.Release()
			src := inbox.Queue{Dir: rr.Paths().Inbox, MaxReply: s.o.Config.Limits.MaxReply}.Source(i.ID, false)
			settle := func(name, hash string) { src.Settle(name, hash, runner.Applied) }
			if _, err := sess.Recover(s.ctx, settle); err != nil && !errors.As(err, new(*runner.WaitingError)) {
				rep.Warning(runner.Warning{Message: err.Error()})
			}
		}()
	}
}

// newRunner returns a runner telling rep what happens, for every session
// whatever its folder; a new one works on workspace, or the default.
func (s *Server) newRunner(rep runner.Reporter, workspace string) (*runner.Runner, error) {
	c := s.o.Config
	c.Reporter, c.WorkspaceGiven = rep, false
	if workspace != "" {
		ws, err := filepath.Abs(workspace)
		if err != nil {
			return nil, err
		}
		if info, err := os.Stat(ws); err != nil || !info.IsDir() {
			return nil, badRequest(fmt.Sprintf("workspace %s is not a folder", workspace))
		}
		if err := c.Paths.CheckLayout(ws); err != nil {
			return nil, badRequest(err.Error())
		}
		c.Paths.Workspace = ws
	}
	return runner.New(c), nil
}

// The page: its assets (htmx and its SSE extension, vendored with their
// licences; the page's script and style) and templates, embedded.

//go:embed assets
var assets embed.FS

// pages are the page and its fragments, built when a server is made (not
// at every courier start): html/template escapes what they show by where
// it goes, so a reply's <script> comes out as text. The style and script
// go inside the page, so that it loads in one request; policy names their
// hashes, so that no other inline script or style runs.
func pages() (tmpl *template.Template, policy string) {
	style := asset("page.css")
	script := asset("htmx.min.js") + "\n;\n" + asset("sse.min.js") + "\n;\n" + asset("page.js")
	policy = "default-src 'none'; script-src " + sha(script) + "; style-src " + sha(style) +
		"; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	return template.Must(template.New("").Funcs(template.FuncMap{
		"describe": describe,
		"count":    func(n int, noun string) string { return human.Count(n, noun, "") },
		"bytes":    func(n int) string { return human.Bytes(int64(n)) },
		"lines":    func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") },
		"diffLine": diffLine,
		"failed":   func(r *command.Result) bool { return r != nil && !r.Success() },
		"style":    func() template.CSS { return template.CSS(style) },
		"script":   func() template.JS { return template.JS(script) },
	}).ParseFS(assets, "assets/page.html")), policy
}

func asset(name string) string {
	data, _ := assets.ReadFile("assets/" + name) // embedded: cannot fail
	return string(data)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func diffLine(l string) string {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return "file"
	case strings.HasPrefix(l, "@@"):
		return "hunk"
	case strings.HasPrefix(l, "+"):
		return "add"
	case strings.HasPrefix(l, "-"):
		return "del"
	}
	return ""
}

type homeView struct {
	Sessions  []runner.Info
	Workspace string
	Protocols []string
}

func (s *Server) home(w http.ResponseWriter, _ *http.Request) error {
	rr, _ := s.runner("")
	v := homeView{Workspace: rr.Paths().Workspace}
	v.Sessions, _ = rr.Sessions()
	for _, fe := range s.o.Config.FrontEnds {
		v.Protocols = append(v.Protocols, fe.Name())
	}
	return s.page(w, "home", v)
}

type sessionView struct {
	Info    runner.Info
	Status  statusView
	Request reqView
	Log     logView
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rr, _ := s.runner(id)
	info, turns, err := rr.Log(id)
	if err != nil {
		return err
	}
	text, _ := rr.RequestText(id, false)
	return s.page(w, "session", sessionView{Info: info, Status: s.statusView(info), Request: requestView(info, text), Log: logView{Info: info, Turns: turns}})
}

func (s *Server) page(w http.ResponseWriter, name string, v any) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return s.pages.ExecuteTemplate(w, name, v)
}

type statusView struct {
	Info runner.Info
	Turn *live
}

type reqView struct {
	Info   runner.Info
	Text   string
	Tokens int
}

func requestView(info runner.Info, text string) reqView {
	if info.State != runner.StateWaiting {
		text = "" // answered already, or nothing to answer
	}
	return reqView{Info: info, Text: text, Tokens: human.Tokens(text)}
}
