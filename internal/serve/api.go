package serve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/workspace"
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

// show answers a GET: with the page's fragment tmpl of page, else with
// api as JSON, or a text as it is.
func (s *Server) show(w http.ResponseWriter, r *http.Request, tmpl string, page, api any) error {
	if text, ok := api.(string); ok && !fromPage(r) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, err := io.WriteString(w, text)
		return err
	}
	if fromPage(r) {
		api = page
	}
	s.answer(w, r, http.StatusOK, tmpl, api)
	return nil
}

// done is what an action came to: the session after it, and a sentence.
type done struct {
	runner.Info
	Message string `json:"message"`
	Error   bool   `json:"-"`
}

// fail answers with err, worded for the person, under its status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var v any = struct {
		Error string `json:"error"`
	}{err.Error()}
	if fromPage(r) {
		v = done{Message: err.Error(), Error: true}
	}
	s.answer(w, r, statusOf(err), "flash", v)
}

// conflict is an action refused as the session stands.
type conflict string

func (c conflict) Error() string { return string(c) }

// badRequest is a request that cannot be carried out as written.
type badRequest string

func (b badRequest) Error() string { return string(b) }

// statusOf is the HTTP status of an error.
func statusOf(err error) int {
	switch {
	case errors.Is(err, history.ErrNotFound), errors.Is(err, runner.ErrNoSession), errors.As(err, new(*runner.NotRunError)), errors.As(err, new(*history.InvalidIDError)):
		return http.StatusNotFound
	case errors.As(err, new(*http.MaxBytesError)), errors.As(err, new(*reply.TooLargeError)):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, new(badRequest)), reply.IsUnusable(err), errors.As(err, new(runner.EmptyTaskError)), errors.As(err, new(runner.EmptyMessageError)):
		return http.StatusBadRequest
	case errors.As(err, new(conflict)), errors.As(err, new(*history.LockedError)), errors.As(err, new(*runner.CompleteError)),
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
	return s.show(w, r, "list", infos, infos)
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
	return s.show(w, r, "status", s.statusView(info), info)
}

// request is GET /api/sessions/{id}/request (?full=1: for a fresh chat).
func (s *Server) request(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rr, _ := s.runner(id)
	text, err := rr.RequestText(id, r.URL.Query().Get("full") != "")
	if err != nil {
		return err
	}
	info, _ := rr.Status(id)
	return s.show(w, r, "request", requestView(info, text), text)
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
	rep, _, err := s.parse(id, f.Get("reply"), at)
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
	var locked *history.LockedError
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
	code, msg, err := outcome(events, err)
	if err != nil {
		return err
	}
	return s.done(w, r, rr, to, code, msg)
}

// parse reads a reply for session id as the session's protocol reads it.
func (s *Server) parse(id, text string, at time.Time) (reply.Reply, runner.Info, error) {
	rr, _ := s.runner(id)
	info, err := rr.Status(id)
	if err != nil {
		return reply.Reply{}, info, err
	}
	fe, err := rr.FrontEnd(info.Protocol)
	if err != nil {
		return reply.Reply{}, info, err
	}
	// Named as 'courier paste' names one: the name routes it.
	rep, err := reply.New(fmt.Sprintf("%s_reply_%s.txt", id, at.Format("20060102-150405.000")), text, s.o.Config.Limits.MaxReply, fe)
	return rep, info, err
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

// outcome is what a turn came to, for done.
func outcome(events *reporter, err error) (int, string, error) {
	var waiting *runner.WaitingError
	switch {
	case errors.As(err, &waiting):
		return http.StatusOK, fmt.Sprintf("Waits for your approval of %q: %s", waiting.Pending.Command, waiting.Pending.Reason), nil
	case events.refused != "" && (err == nil || errors.As(err, new(*runner.UnappliedError))):
		// Applied before, outdated, or set aside.
		return 0, "", conflict(events.refused)
	case err != nil:
		return 0, "", err
	case events.ended == nil:
		return http.StatusOK, "Nothing was applied", nil
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
	return http.StatusOK, msg, nil
}

// action is a request changing session id, held while it works.
type action struct {
	id     string
	form   url.Values
	rr     *runner.Runner
	events *reporter
}

// act is the handler of an action: it answers with the session after it.
func (s *Server) act(do func(*http.Request, *action) (int, string, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		f, err := s.form(r, "")
		if err != nil {
			return err
		}
		defer s.hold(id)()
		rr, events := s.runner(id)
		code, msg, err := do(r, &action{id: id, form: f, rr: rr, events: events})
		if err != nil {
			return err
		}
		return s.done(w, r, rr, id, code, msg)
	}
}

// decide is POST .../approve (all=1: and all like it) and .../deny
// (reason), given to the courier process waiting for it, if one does.
func (s *Server) decide(r *http.Request, a *action) (int, string, error) {
	d := runner.Decision{Answer: runner.Deny, Reason: a.form.Get("reason")}
	if strings.HasSuffix(r.URL.Path, "/approve") {
		d = runner.Decision{Answer: runner.Approve}
		if a.form.Get("all") != "" {
			d.Answer = runner.ApproveAll
		}
	}
	handed, err := a.rr.Decide(s.ctx, a.id, d, inbox.Queue{Dir: a.rr.Paths().Inbox, MaxReply: s.o.Config.Limits.MaxReply}.Source("", false))
	if handed {
		return http.StatusAccepted, "Gave the answer to the courier process waiting for it; it goes on there", nil
	}
	return outcome(a.events, err)
}

// say is POST .../say: text (and newChat) for the next request.
func (s *Server) say(_ *http.Request, a *action) (int, string, error) {
	said, err := a.rr.Say(a.id, a.form.Get("text"), a.form.Get("newChat") != "")
	msg := "The request was written again with your message: copy it again"
	switch {
	case said.Holder != "" && !said.Heard:
		msg = fmt.Sprintf("Left the message for the %s holding the session: it goes into the next request written", said.Holder)
	case said.Holder != "":
		msg = fmt.Sprintf("Gave the message to the %s holding the session, which wrote the request again: copy it again", said.Holder)
	case !said.Rewritten:
		msg = "The message goes into the request the turn under way ends with"
	}
	return http.StatusOK, msg, err
}

// undo is POST .../undo, as 'courier undo'.
func (s *Server) undo(_ *http.Request, a *action) (int, string, error) {
	sess, err := a.rr.HoldLatest(a.id, "courier serve")
	if err != nil {
		return 0, "", err
	}
	rep, err := sess.Undo()
	sess.Release()
	return http.StatusOK, fmt.Sprintf("Undid the answer to request %d: %d files restored, %d removed", rep.Sequence, len(rep.Restored), len(rep.Removed)), err
}

// continueTask is POST .../continue: a follow-up task.
func (s *Server) continueTask(_ *http.Request, a *action) (int, string, error) {
	_, err := a.rr.Continue(a.id, a.form.Get("task"))
	return http.StatusOK, "The next request asks for the follow-up task: copy it", err
}

func (s *Server) log(w http.ResponseWriter, r *http.Request) error {
	rr, _ := s.runner("")
	info, turns, err := rr.Log(r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.show(w, r, "log", logView{Info: info, Turns: turns}, logView{Info: info, Turns: turns})
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
	return s.show(w, r, "diff", b.String(), b.String())
}

// Reviewed is one command of a reply as Review shows it, nothing applied:
// a file command's diff against the workspace now (or why it would
// fail), a RUN_COMMAND's policy decision (ask, deny) and reason; one an
// earlier approval of all like it covers runs unasked, and says so.
type Reviewed struct {
	Index    int             `json:"index"`
	Command  command.Command `json:"command"`
	Diff     string          `json:"diff,omitempty"`
	Note     string          `json:"note,omitempty"`
	Approval string          `json:"approval,omitempty"`
	Reason   string          `json:"reason,omitempty"`
}

type reviewView struct {
	ID    string
	Items []Reviewed
}

// showLimit bounds a file Review reads, and a diff it shows.
const showLimit = 1 << 20

// review is POST /api/sessions/{id}/review: what each command of the
// reply (the body, or the form's "reply") would do.
func (s *Server) review(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	f, err := s.form(r, "reply")
	if err != nil {
		return err
	}
	rep, info, err := s.parse(id, f.Get("reply"), time.Now())
	if err != nil {
		return err
	}
	ws, err := workspace.Open(info.Workspace)
	if err != nil {
		return err
	}
	defer ws.Close()
	items := preview(ws, s.o.Config.Commands.Policy, info.Approved, rep.Parsed.Commands)
	return s.show(w, r, "review", reviewView{ID: id, Items: items}, items)
}

// preview goes over the commands on copies of the files in memory, as
// the engine would (what a RUN_COMMAND does it cannot know).
func preview(ws *workspace.Workspace, pol *policy.Policy, approved []string, cmds []command.Command) []Reviewed {
	files := map[string]*string{} // after the commands so far; nil: deleted
	lines := map[string]*edit.Tracker{}
	read := func(p string) (string, bool, error) {
		if t, ok := files[p]; ok {
			return *cmp.Or(t, new("")), t != nil, nil
		}
		f, info, err := ws.OpenRegular(p)
		if err != nil {
			return "", false, err
		}
		defer f.Close()
		if info.Size() > showLimit {
			return "", true, fmt.Errorf("%s is too large to show a diff of (%d bytes)", p, info.Size())
		}
		data, err := io.ReadAll(io.LimitReader(f, showLimit))
		return string(data), true, err
	}
	out := make([]Reviewed, len(cmds))
	for i, c := range cmds {
		v := Reviewed{Index: i, Command: c}
		switch c.Type {
		case command.CreateFile, command.EditFile, command.DeleteFile:
			before, exists, err := read(c.Path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				v.Note = err.Error()
				break
			}
			after, note := change(c, before, exists, lines)
			if v.Note = note; note == "" {
				v.Diff, _, _ = edit.Diff(c.Path, before, *cmp.Or(after, new("")), showLimit)
				files[c.Path] = after
			}
		case command.RunCommand:
			lines = map[string]*edit.Tracker{}
			if pol != nil {
				switch verdict := pol.Check(c.Command).WithEnv(c.Env); {
				case verdict.CoveredBy(approved):
					v.Note = "runs without asking: you approved all like it (" + verdict.Rule + ")"
				case verdict.Decision != policy.Allow:
					v.Approval, v.Reason = string(verdict.Decision), verdict.Reason
				}
			}
		}
		out[i] = v
	}
	return out
}

// change is what file command c makes of a file's text (nil: deletes
// it), or why it would fail; lines numbers a reply's line-range edits of a
// file as it was before them.
func change(c command.Command, before string, exists bool, lines map[string]*edit.Tracker) (*string, string) {
	if c.Type != command.EditFile || !c.IsLineRange() {
		delete(lines, c.Path)
	}
	switch {
	case c.Type == command.DeleteFile && !exists, c.Type == command.EditFile && !exists:
		return nil, "the file does not exist: this would fail"
	case c.Type == command.DeleteFile:
		return nil, ""
	case c.Type == command.CreateFile && exists && c.NoOverwrite:
		return nil, "the file exists: this would fail"
	case c.Type == command.CreateFile && c.Encoding == command.Base64:
		data, err := base64.StdEncoding.DecodeString(c.Content)
		if err != nil {
			return nil, "not valid base64: this would fail"
		}
		return nil, fmt.Sprintf("writes %d bytes (binary)", len(data))
	case c.Type == command.CreateFile:
		if line, text, found := edit.HasElision(c.Content); found && exists {
			return nil, fmt.Sprintf("line %d (%q) stands for code left out: courier refuses to overwrite the file with it", line, text)
		}
		return &c.Content, ""
	}
	var after string
	var err error
	switch {
	case c.Literal:
		after, err = edit.ApplyLiteral(before, c.Edits)
	case len(c.Edits) > 0:
		var a edit.Applied
		a, err = edit.ApplyEdits(before, c.Edits)
		after = a.Text
	default:
		t, ok := lines[c.Path]
		if !ok {
			t = edit.NewTracker(before)
			lines[c.Path] = t
		}
		after, err = t.Apply(edit.LineRange{Start: c.StartLine, End: c.EndLine, Text: c.Content})
	}
	if err != nil {
		return nil, "this would fail: " + err.Error()
	}
	return &after, ""
}

// The Agent Spaces runtime over HTTP: 'courier ops' and 'courier ops
// resume', each answered with the events message 'courier ops' prints.

// startRun is POST /v1/runs (?policy=PRESET): an operations message,
// carried out as a run.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) error {
	preset := r.URL.Query().Get("policy")
	if _, err := agentspaces.Preset(preset, policy.Config{}); err != nil {
		return badRequest(err.Error() + ": ?policy=standard, permissive or restrictive")
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	cmds, err := agentspaces.Decode(data)
	if err != nil {
		// Not a message that can run: no run is made.
		return events200(w, agentspaces.Events(runner.NewID(), agentspaces.Outcome{Err: err}, time.Now()))
	}
	rr, _ := s.runner("")
	rep, err := rr.StartRun(s.ctx, cmds, runner.RunOptions{Protocol: agentspaces.ChatName, Preset: preset,
		Name: "POST /v1/runs", Hash: history.Hash(string(data)), Task: RunTask(cmds)})
	if err != nil && rep.Commands == nil {
		rep.Commands = cmds
	}
	return events200(w, RunEvents(rep, err, time.Now()))
}

// resumeRun is POST /v1/runs/{id}/resume: the answer to the approval the
// run waits on, or an empty body to finish a run stopped while it ran.
func (s *Server) resumeRun(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var d *runner.RunDecision
	if len(bytes.TrimSpace(data)) > 0 {
		a, err := agentspaces.DecodeApproval(data)
		if err != nil {
			return badRequest(err.Error())
		}
		d = &runner.RunDecision{Operation: a.OperationID, Approved: a.Decision == agentspaces.Approved, Reason: a.Reason}
	}
	defer s.hold(id)()
	rr, _ := s.runner(id)
	rep, err := rr.ResumeRun(s.ctx, id, d, agentspaces.ApprovalID)
	if err != nil && rep.Commands == nil {
		return err
	}
	return events200(w, RunEvents(rep, err, time.Now()))
}

// runStatus is GET /v1/runs/{id}: the run's status, with the
// approvalRequired event it waits on, "running" or "interrupted".
func (s *Server) runStatus(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rr, _ := s.runner(id)
	info, err := rr.Status(id)
	if err == nil && !info.Run {
		err = &runner.NotRunError{Session: id}
	}
	if err != nil {
		return err
	}
	m := agentspaces.EventsMessage{ProtocolVersion: agentspaces.ProtocolVersion, RunID: id, Status: agentspaces.StatusCompleted, Events: []agentspaces.Event{}}
	switch {
	case info.Pending != nil && info.PendingCommand != nil:
		m.Status = agentspaces.StatusAwaitingApproval
		p := agentspaces.Pause{Index: info.Pending.Index, Reason: info.Pending.Reason, Rule: info.Pending.Rule}
		m.Events = append(m.Events, agentspaces.ApprovalEvent(*info.PendingCommand, p, time.Now()))
	case info.State == runner.StateApplying && info.Holder != nil:
		m.Status = "running"
	case !info.Complete:
		m.Status = "interrupted"
	}
	return events200(w, m)
}

// events200 writes an events message: whatever its status, the request
// was carried out.
func events200(w http.ResponseWriter, m agentspaces.EventsMessage) error {
	text, err := agentspaces.FormatEvents(m)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = io.WriteString(w, text)
	return err
}

// RunEvents is the events message of where a run stands, as 'courier ops'
// prints it; err is the failure that stopped it.
func RunEvents(rep runner.RunReport, err error, now time.Time) agentspaces.EventsMessage {
	o := agentspaces.Outcome{Commands: rep.Commands, Results: rep.Results, From: rep.From, Answered: rep.Answered, Err: err}
	if rep.Paused != nil {
		o.Paused = &agentspaces.Pause{Index: rep.Paused.Index, Reason: rep.Paused.Reason, Rule: rep.Paused.Rule}
	}
	return agentspaces.Events(rep.ID, o, now)
}

// RunTask names a run in 'courier sessions': its first message, or what
// it does.
func RunTask(cmds []command.Command) string {
	for _, c := range cmds {
		if c.Type == command.Message || c.Type == command.Done {
			return "ops: " + human.FirstLine(c.Text, 80)
		}
	}
	return fmt.Sprintf("ops: %d operations", len(cmds))
}
