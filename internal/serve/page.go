package serve

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"strings"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
)

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
	data, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
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

func (s *Server) statusView(info runner.Info) statusView {
	v := statusView{Info: info}
	if l, ok := s.lastTurn(info.ID); ok {
		v.Turn = &l
	}
	return v
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
