package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/console"
	"github.com/courier-agent/courier/internal/runner"
)

// publish sends one server-sent event to every /api/events stream,
// closing one too slow to take it (the browser opens it again).
func (s *Server) publish(kind string, data []byte) {
	msg := fmt.Appendf(nil, "event: %s\ndata: %s\n\n", kind, data)
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs {
		select {
		case ch <- msg:
		default:
			delete(s.subs, ch)
			close(ch)
		}
	}
}

// events is GET /api/events: the events of 'courier watch --json', each
// with its session, and sessionChanged for what others changed.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	flush := http.NewResponseController(w).Flush
	ch := make(chan []byte, 256)
	s.mu.Lock()
	s.subs[ch] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.subs[ch] {
			delete(s.subs, ch)
			close(ch)
		}
	}()
	fmt.Fprint(w, ": courier\n\n")
	flush()
	for {
		select {
		case msg, ok := <-ch:
			if !ok {
				return
			}
			if _, err := w.Write(msg); err != nil || flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// reporter tells what happens in one session: the events to /api/events,
// the turn to the session's live record, and what became of the reply to
// the request running the turn.
type reporter struct {
	*console.JSON
	s           *Server
	id, refused string
	ended       *runner.TurnEnded
}

// runner returns a runner reporting on session id ("" for a new one).
func (s *Server) runner(id string) (*runner.Runner, *reporter) {
	rep := s.reporter(id)
	r, _ := s.newRunner(rep, "") // no workspace to check: no error
	return r, rep
}

func (s *Server) reporter(id string) *reporter {
	rep := &reporter{s: s, id: id}
	rep.JSON = console.NewJSON(rep)
	return rep
}

// Write publishes the JSON reporter's lines, adding the session where an
// event does not name one.
func (r *reporter) Write(p []byte) (int, error) {
	line := bytes.TrimSuffix(p, []byte("\n"))
	var head struct {
		Event   string
		Session *string
	}
	if json.Unmarshal(line, &head) != nil {
		return len(p), nil
	}
	if head.Session == nil && r.id != "" {
		line = append(fmt.Appendf(nil, `{"session":%q,`, r.id), line[1:]...)
	}
	r.s.publish(head.Event, line)
	return len(p), nil
}

func (r *reporter) SessionStarted(e runner.SessionStarted) {
	r.id = e.Session
	r.JSON.SessionStarted(e)
}

func (r *reporter) ReplyTaken(e runner.ReplyTaken) {
	r.s.update(r.id, func(l *live) { *l = live{Sequence: e.Sequence, Reply: e.Name} })
	r.JSON.ReplyTaken(e)
}

func (r *reporter) TurnResumed(e runner.TurnResumed) {
	r.s.update(r.id, func(l *live) {
		if l.Sequence != e.Sequence {
			*l = live{Sequence: e.Sequence, Reply: e.Reply} // the turn's start was another courier's
		}
	})
	r.JSON.TurnResumed(e)
}

func (r *reporter) CommandStarted(e runner.CommandStarted) {
	r.s.update(r.id, func(l *live) { l.row(e.Index).Command = e.Command })
	r.JSON.CommandStarted(e)
}

func (r *reporter) CommandFinished(e runner.CommandFinished) {
	r.s.update(r.id, func(l *live) { l.row(e.Index).Command, l.row(e.Index).Result = e.Command, &e.Result })
	r.JSON.CommandFinished(e)
}

func (r *reporter) TurnEnded(e runner.TurnEnded) {
	r.ended = &e
	r.s.update(r.id, func(l *live) { l.Complete, l.Summary = e.Complete, e.Summary })
	r.JSON.TurnEnded(e)
}

func (r *reporter) ReplyRefused(e runner.ReplyRefused) {
	r.refused = e.Reason
	r.JSON.ReplyRefused(e)
}

func (r *reporter) ReplySetAside(e runner.ReplySetAside) {
	r.refused = e.Err.Error()
	r.JSON.ReplySetAside(e)
}

func (r *reporter) Warning(e runner.Warning) {
	r.s.update(r.id, func(l *live) { l.Notes = append(l.Notes, e.Message) })
	r.JSON.Warning(e)
}

// live is the last turn of a session this server carried out.
type live struct {
	Sequence       int
	Reply, Summary string
	Rows           []row
	Notes          []string
	Complete       bool
}

// row is one command of the turn: its result once it has one.
type row struct {
	Command command.Command
	Result  *command.Result
}

func (l *live) row(i int) *row {
	for len(l.Rows) <= i {
		l.Rows = append(l.Rows, row{})
	}
	return &l.Rows[i]
}

func (s *Server) update(id string, change func(*live)) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lives[id]
	if !ok {
		l = &live{}
		s.lives[id] = l
	}
	change(l)
}

// statusView is session info with a copy of its last turn here, if any.
func (s *Server) statusView(info runner.Info) statusView {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lives[info.ID]
	if !ok {
		return statusView{Info: info}
	}
	c := *l
	c.Rows = slices.Clone(l.Rows)
	return statusView{Info: info, Turn: &c}
}

// watch says sessionChanged, every Poll, of each session another courier
// changed.
func (s *Server) watch() {
	r := runner.New(s.o.Config)
	seen := map[string]string{}
	tick := time.NewTicker(s.o.Poll)
	defer tick.Stop()
	for first := true; ; first = false {
		infos, _ := r.Sessions()
		for _, i := range infos {
			key := fmt.Sprint(i.State, i.Sequence, i.UpdatedAt, i.Holder != nil)
			if seen[i.ID] != key && !first {
				s.publish("sessionChanged", fmt.Appendf(nil, `{"event":"sessionChanged","session":%q,"state":%q,"sequence":%d}`, i.ID, i.State, i.Sequence))
			}
			seen[i.ID] = key
		}
		select {
		case <-tick.C:
		case <-s.ctx.Done():
			return
		}
	}
}
