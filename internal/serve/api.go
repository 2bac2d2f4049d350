package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

// The JSON API of the sessions, which the page uses too: a request from
// the page (HX-Request) is answered with the page's fragment.

func fromPage(r *http.Request) bool { return r.Header.Get("HX-Request") == "true" }

// answer writes v: JSON, or the page's fragment tmpl.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, code int, tmpl string, v any) {
	if fromPage(r) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(code)
		s.pages.ExecuteTemplate(w, tmpl, v)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// done is what an action came to: the session after it, and a sentence.
type done struct {
	runner.Info
	Message string `json:"message"`
	Error   bool   `json:"-"`
}

// fail answers with err, worded for the person, under its status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if fromPage(r) {
		s.answer(w, r, statusOf(err), "flash", done{Message: err.Error(), Error: true})
		return
	}
	s.answer(w, r, statusOf(err), "", struct {
		Error string `json:"error"`
	}{err.Error()})
}

// conflict is an action refused as the session stands.
type conflict string

func (c conflict) Error() string { return string(c) }

// badRequest is a request that cannot be carried out as written.
type badRequest string

func (b badRequest) Error() string { return string(b) }

// statusOf is the HTTP status of an error.
func statusOf(err error) int {
	var (
		maxBytes *http.MaxBytesError
		tooLarge *reply.TooLargeError
		bad      badRequest
		notRun   *runner.NotRunError
		invalid  *runner.InvalidIDError
	)
	switch {
	case errors.Is(err, runner.ErrNotFound), errors.Is(err, runner.ErrNoSession), errors.As(err, &notRun), errors.As(err, &invalid):
		return http.StatusNotFound
	case errors.As(err, &maxBytes), errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &bad), reply.IsUnusable(err), errors.As(err, new(runner.EmptyTaskError)), errors.As(err, new(runner.EmptyMessageError)):
		return http.StatusBadRequest
	case errors.As(err, new(conflict)), errors.As(err, new(*runner.LockedError)), errors.As(err, new(*runner.CompleteError)),
		errors.As(err, new(*runner.NotWaitingError)), errors.As(err, new(*runner.UnfinishedError)), errors.As(err, new(*runner.NotCompleteError)),
		errors.As(err, new(*runner.NothingToUndoError)), errors.As(err, new(*runner.WrongOperationError)),
		errors.As(err, new(*runner.NothingWaitsError)), errors.As(err, new(*runner.AnswerNeededError)), errors.As(err, new(*runner.OtherWorkspaceError)):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// form reads a request's form; with raw, a body that is no form holding
// that field is its value (curl --data-binary says it is a form too).
func (s *Server) form(r *http.Request, raw string) (url.Values, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "multipart/form-data" {
		err := r.ParseMultipartForm(max(32<<20, s.o.Config.Limits.MaxReply))
		return r.PostForm, err
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if v, err := url.ParseQuery(string(data)); err == nil && (raw == "" || (ct == "application/x-www-form-urlencoded" && v.Has(raw))) {
		return v, nil
	}
	if raw == "" {
		return nil, badRequest("the body is not a form")
	}
	return url.Values{raw: {string(data)}}, nil
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) error {
	rr, _ := s.runner("")
	infos, _ := rr.Sessions()
	s.answer(w, r, http.StatusOK, "list", infos)
	return nil
}

// create is POST /api/sessions: task, workspace and protocol.
func (s *Server) create(w http.ResponseWriter, r *http.Request) error {
	f, err := s.form(r, "")
	if err != nil {
		return err
	}
	rr, err := s.newRunner(s.reporter(""), strings.TrimSpace(f.Get("workspace")))
	if err != nil {
		return err
	}
	if _, err := rr.FrontEnd(f.Get("protocol")); err != nil {
		return badRequest(err.Error())
	}
	id, err := rr.Create(f.Get("task"), runner.CreateOptions{Protocol: f.Get("protocol")})
	if err != nil {
		return err
	}
	w.Header().Set("HX-Redirect", "/s/"+id)
	return s.done(w, r, rr, id, http.StatusCreated, "Started session "+id)
}

func (s *Server) done(w http.ResponseWriter, r *http.Request, rr *runner.Runner, id string, code int, msg string) error {
	info, err := rr.Status(id)
	s.answer(w, r, code, "flash", done{Info: info, Message: msg})
	return err
}

// status is GET /api/sessions/{id}: where the session stands.
func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rr, _ := s.runner(id)
	info, err := rr.Status(id)
	if err != nil {
		return err
	}
	if fromPage(r) {
		s.answer(w, r, http.StatusOK, "status", s.statusView(info))
	} else {
		s.answer(w, r, http.StatusOK, "", info)
	}
	return nil
}

// request is GET /api/sessions/{id}/request (?full=1: for a fresh chat).
func (s *Server) request(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rr, _ := s.runner(id)
	text, err := rr.RequestText(id, r.URL.Query().Get("full") != "")
	if err != nil {
		return err
	}
	if fromPage(r) {
		info, _ := rr.Status(id)
		s.answer(w, r, http.StatusOK, "request", requestView(info, text))
		return nil
	}
	return plain(w, text)
}

func plain(w http.ResponseWriter, text string) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err := io.WriteString(w, text)
	return err
}

// reply is POST /api/sessions/{id}/reply: the reply (the body, or the
// form's "reply") applied as one saved into inbox/. From Review, "run" are
// the commands to carry out; the LLM is told which were left out, and
// "reason".
func (s *Server) reply(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	f, err := s.form(r, "reply")
	if err != nil {
		return err
	}
	at := time.Now()
	rep, err := s.parse(id, f.Get("reply"), at)
	if err != nil {
		return err
	}
	to := rep.Route(s.o.Config.FrontEnds...)
	var left []command.Command
	if f.Has("reviewed") {
		if to != id {
			return conflict(fmt.Sprintf("the reply names session %s: review it on that session's page", to))
		}
		left = pick(&rep, f["run"])
	}
	defer s.hold(to)()
	rr, events := s.runner(to)
	inboxDir := rr.Paths().Inbox
	sess, err := rr.Hold(to, "courier serve")
	var locked *runner.LockedError
	if errors.As(err, &locked) && left == nil {
		// The courier holding the session takes it from inbox/.
		if _, err := inbox.Save(inboxDir, to, f.Get("reply"), at); err != nil {
			return err
		}
		who := "courier process"
		if locked.Holder != nil {
			who = locked.Holder.Command
		}
		return s.done(w, r, rr, to, http.StatusAccepted, fmt.Sprintf("Left the reply in inbox/ for the %s holding session %s", who, to))
	}
	if err != nil {
		return err
	}
	err = sess.Serve(s.ctx, &pasted{rep: rep})
	sess.Release()
	// The pasted reply is kept, as inbox/ keeps the replies it takes.
	if kept := filepath.Join(inboxDir, "processed"); os.MkdirAll(kept, 0o755) == nil {
		inbox.Save(kept, to, f.Get("reply"), at)
	}
	if len(left) > 0 && (err == nil || errors.As(err, new(*runner.WaitingError))) && events.refused == "" {
		rr.Say(to, leftOut(left, f.Get("reason")), false)
	}
	return s.outcome(w, r, rr, to, events, err)
}

// parse reads a reply for session id as the session's protocol reads it.
func (s *Server) parse(id, text string, at time.Time) (reply.Reply, error) {
	rr, _ := s.runner(id)
	info, err := rr.Status(id)
	if err != nil {
		return reply.Reply{}, err
	}
	fe, err := rr.FrontEnd(info.Protocol)
	if err != nil {
		return reply.Reply{}, err
	}
	// Named as 'courier paste' names one: the name routes it.
	return reply.New(fmt.Sprintf("%s_reply_%s.txt", id, at.Format("20060102-150405.000")), text, s.o.Config.Limits.MaxReply, fe)
}

// pick keeps the commands whose indexes run holds, returning the others.
func pick(rep *reply.Reply, run []string) []command.Command {
	var kept, left []command.Command
	for i, c := range rep.Parsed.Commands {
		if slices.Contains(run, strconv.Itoa(i)) {
			kept = append(kept, c)
		} else {
			left = append(left, c)
		}
	}
	rep.Parsed.Commands = kept
	return left
}

// leftOut tells the LLM which of its commands the person left out, and why.
func leftOut(left []command.Command, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "I left out %s of your last reply, not carried out:", human.Count(len(left), "command", ""))
	for _, c := range left {
		fmt.Fprintf(&b, "\n- line %d: %s", c.Line, describe(c))
	}
	if reason = strings.TrimSpace(reason); reason != "" {
		b.WriteString("\nWhy: " + reason)
	}
	return b.String()
}

func describe(c command.Command) string {
	switch {
	case c.Type == command.RunCommand:
		return "RUN_COMMAND " + human.FirstLine(c.Command, 100)
	case c.Type == command.Message || c.Type == command.Done:
		return string(c.Type) + " " + human.FirstLine(c.Text, 100)
	case c.Type == command.ParseError:
		return "PARSE_ERROR " + human.FirstLine(c.Error, 100)
	}
	return string(c.Type) + " " + c.Path
}

// pasted is a source of the one reply a request gave.
type pasted struct {
	rep   reply.Reply
	given bool
}

func (p *pasted) Next(_ context.Context, req runner.Request) (reply.Reply, error) {
	if p.given {
		return reply.Reply{}, runner.ErrExhausted
	}
	p.given = true
	return p.rep.For(req.FrontEnd), nil
}

func (p *pasted) Settle(string, string, runner.Settlement) (string, error) { return "", nil }

func (s *Server) outcome(w http.ResponseWriter, r *http.Request, rr *runner.Runner, id string, events *reporter, err error) error {
	var waiting *runner.WaitingError
	switch {
	case errors.As(err, &waiting):
		return s.done(w, r, rr, id, http.StatusOK, fmt.Sprintf("Waits for your approval of %q: %s", waiting.Pending.Command, waiting.Pending.Reason))
	case events.refused != "" && (err == nil || errors.As(err, new(*runner.UnappliedError))):
		// Applied before, outdated, or set aside.
		return conflict(events.refused)
	case err != nil:
		return err
	case events.ended == nil:
		return s.done(w, r, rr, id, http.StatusOK, "Nothing was applied")
	}
	failed := 0
	for _, res := range events.ended.Results {
		if !res.Success() {
			failed++
		}
	}
	msg := fmt.Sprintf("Applied: %s, %d failed", human.Count(len(events.ended.Results), "command", ""), failed)
	if events.ended.Complete {
		msg += "; the session is complete"
	}
	return s.done(w, r, rr, id, http.StatusOK, msg)
}

// decide is POST .../approve (all=1: and all like it) and .../deny
// (reason), given to the courier process waiting for it, if one does.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	f, err := s.form(r, "")
	if err != nil {
		return err
	}
	d := runner.Decision{Answer: runner.Deny, Reason: f.Get("reason")}
	if strings.HasSuffix(r.URL.Path, "/approve") {
		d = runner.Decision{Answer: runner.Approve}
		if f.Get("all") != "" {
			d.Answer = runner.ApproveAll
		}
	}
	defer s.hold(id)()
	rr, events := s.runner(id)
	handed, err := rr.Decide(s.ctx, id, d, inbox.Queue{Dir: rr.Paths().Inbox, MaxReply: s.o.Config.Limits.MaxReply}.Source("", false))
	if handed {
		return s.done(w, r, rr, id, http.StatusAccepted, "Gave the answer to the courier process waiting for it; it goes on there")
	}
	return s.outcome(w, r, rr, id, events, err)
}

// say is POST .../say: text (and newChat) for the next request.
func (s *Server) say(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	f, err := s.form(r, "")
	if err != nil {
		return err
	}
	defer s.hold(id)()
	rr, _ := s.runner(id)
	said, err := rr.Say(id, f.Get("text"), f.Get("newChat") != "")
	if err != nil {
		return err
	}
	msg := "The request was written again with your message: copy it again"
	switch {
	case said.Holder != "" && !said.Heard:
		msg = fmt.Sprintf("Left the message for the %s holding the session: it goes into the next request written", said.Holder)
	case said.Holder != "":
		msg = fmt.Sprintf("Gave the message to the %s holding the session, which wrote the request again: copy it again", said.Holder)
	case !said.Rewritten:
		msg = "The message goes into the request the turn under way ends with"
	}
	return s.done(w, r, rr, id, http.StatusOK, msg)
}

// undo is POST .../undo, as 'courier undo'.
func (s *Server) undo(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	defer s.hold(id)()
	rr, _ := s.runner(id)
	sess, err := rr.HoldLatest(id, "courier serve")
	if err != nil {
		return err
	}
	rep, err := sess.Undo()
	sess.Release()
	if err != nil {
		return err
	}
	return s.done(w, r, rr, id, http.StatusOK, fmt.Sprintf("Undid the answer to request %d: %d files restored, %d removed", rep.Sequence, len(rep.Restored), len(rep.Removed)))
}

// continueTask is POST .../continue: a follow-up task.
func (s *Server) continueTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	f, err := s.form(r, "")
	if err != nil {
		return err
	}
	defer s.hold(id)()
	rr, _ := s.runner(id)
	if _, err := rr.Continue(id, f.Get("task")); err != nil {
		return err
	}
	return s.done(w, r, rr, id, http.StatusOK, "The next request asks for the follow-up task: copy it")
}

func (s *Server) log(w http.ResponseWriter, r *http.Request) error {
	rr, _ := s.runner("")
	info, turns, err := rr.Log(r.PathValue("id"))
	if err != nil {
		return err
	}
	s.answer(w, r, http.StatusOK, "log", logView{Info: info, Turns: turns})
	return nil
}

type logView struct {
	Info  runner.Info       `json:"session"`
	Turns []history.TurnLog `json:"turns"`
}

// diff is GET .../diff?turn=N, as 'courier diff' prints it.
func (s *Server) diff(w http.ResponseWriter, r *http.Request) error {
	turn := 0
	if t := r.URL.Query().Get("turn"); t != "" {
		var err error
		if turn, err = strconv.Atoi(t); err != nil || turn < 1 {
			return badRequest(fmt.Sprintf("%q is not a request number", t))
		}
	}
	rr, _ := s.runner("")
	var b strings.Builder
	if err := rr.Diff(&b, r.PathValue("id"), turn); err != nil {
		return err
	}
	if fromPage(r) {
		s.answer(w, r, http.StatusOK, "diff", b.String())
		return nil
	}
	return plain(w, b.String())
}
