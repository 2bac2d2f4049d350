package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// Request is the request a session waits to have answered.
type Request struct {
	Session  string
	Sequence int
	// Path is the request's file in outbox/; Text its content.
	Path string
	Text string
	// FrontEnd reads the replies to it.
	FrontEnd frontend.FrontEnd
	// MaxReply is the largest reply accepted, in bytes.
	MaxReply int64
}

// requestPath is where the request of a sequence of a session lives.
func (r *Runner) requestPath(id string, seq int) string {
	return filepath.Join(r.cfg.Paths.Outbox, fmt.Sprintf("%s_seq%04d.txt", id, seq))
}

// writeRequest renders the session's current request and writes it
// atomically.
func (r *Runner) writeRequest(st *session.State) (string, string, error) {
	text, err := r.render(st)
	if err != nil {
		return "", "", err
	}
	p := r.requestPath(st.SessionID, st.SequenceNumber)
	if err := atomicfile.Write(p, []byte(text), 0o644); err != nil {
		return "", "", fmt.Errorf("write request: %w", err)
	}
	return p, text, nil
}

// render builds the text of the session's current request from its state
// and the workspace as it is now.
func (r *Runner) render(st *session.State) (string, error) {
	fe, err := r.frontEnd(st)
	if err != nil {
		return "", err
	}
	ws, err := r.openWorkspace(st)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	files, err := ws.List(workspace.ListOptions{MaxEntries: r.cfg.Limits.ListLimit, GitIgnore: true})
	if err != nil {
		return "", err
	}
	fresh := st.SequenceNumber == 1 || st.NewChat
	req := frontend.Request{
		Session:   st.SessionID,
		Sequence:  st.SequenceNumber,
		Task:      st.Task,
		FollowUps: st.FollowUps,
		Prompt:    st.Prompt,
		Reminder:  r.cfg.ProtocolOnce && !fresh,
		Messages:  st.Messages,
		Files:     files,
		Notices:   st.Notices,
	}
	if fresh && r.cfg.Environment {
		if st.Environment == "" {
			st.Environment = engine.New(ws, r.store, r.cfg.Commands.engine()).Describe(context.Background(), st.SessionID).Text(fe.Words())
		}
		req.Environment = st.Environment
	}
	if st.SequenceNumber > 1 {
		req.Results = st.LastResults
		if req.Results == nil {
			req.Results = []command.Result{}
		}
		if fe.ShowsCommands() {
			req.Commands = r.lastCommands(st)
		}
	}
	req.Requested = r.requested(ws, st.ReadFileRequests, fe.Words())
	if st.SequenceNumber == 1 && len(st.Includes) > 0 {
		req.Requested = append(req.Requested, r.pack(ws, st, fe, req)...)
	}
	return fe.Render(req), nil
}

// request returns the session's current request, writing it again if its
// file is missing.
func (s *Session) request() (Request, error) {
	p := s.r.requestPath(s.st.SessionID, s.st.SequenceNumber)
	req := Request{Session: s.st.SessionID, Sequence: s.st.SequenceNumber, Path: p, FrontEnd: s.fe, MaxReply: s.r.cfg.Limits.MaxReply}
	data, err := os.ReadFile(p)
	if err == nil {
		req.Text = string(data)
		return req, nil
	}
	_, text, err := s.r.writeRequest(s.st)
	if err != nil {
		return req, err
	}
	req.Text = text
	s.r.report(RequestWritten{Session: s.st.SessionID, Sequence: s.st.SequenceNumber, Path: p, Text: text, Rewritten: true, Resumed: true})
	return req, nil
}

// RequestText returns the current request of a session (the named one, or
// the most recently updated) without holding it: from its file, or
// rendered afresh when the file is missing.
func (r *Runner) RequestText(id string) (string, error) {
	st, err := r.resolve(id, true)
	if err != nil {
		return "", err
	}
	if st.IsComplete {
		return "", &CompleteError{Session: st.SessionID}
	}
	data, err := os.ReadFile(r.requestPath(st.SessionID, st.SequenceNumber))
	if err == nil {
		return string(data), nil
	}
	return r.render(st)
}

// resolve loads the named session, or the latest one (incomplete only
// unless anyState).
func (r *Runner) resolve(id string, anyState bool) (*session.State, error) {
	if id == "" {
		return r.latest(anyState)
	}
	return r.store.Load(id)
}

// lastCommands returns the commands whose results the session's request
// shows, from the journal of the turn before it. When the journal cannot
// give them one for one (it is gone, or the results are not a turn's),
// each is rebuilt from its result as far as the result tells.
func (r *Runner) lastCommands(st *session.State) []command.Command {
	if t, err := r.store.ReadTurn(st.SessionID, st.SequenceNumber-1); err == nil {
		if begin, ok := t.Begun(); ok && len(begin.Commands) == len(st.LastResults) {
			return begin.Commands
		}
	}
	cmds := make([]command.Command, len(st.LastResults))
	for i, res := range st.LastResults {
		cmds[i] = command.Command{Type: res.Type, Path: res.Path, Command: res.Command}
	}
	return cmds
}
