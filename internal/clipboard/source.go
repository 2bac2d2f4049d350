package clipboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

// Source takes the LLM's answer when the person copies it in the chat:
// text on the clipboard that holds commands, is not courier's own request,
// names no other session, and differs from what was there before.
type Source struct {
	cb *Clipboard
	// kept is where taken replies are kept for the record (inbox/processed).
	kept string
	// last is the clipboard text last looked at; what was there when the
	// source started is not an answer.
	last    string
	started bool
	session string
	taken   map[string]string // the text of each reply by name, until settled
}

// pollInterval is how often the clipboard is read: quick enough that the
// person sees courier react, rare enough to cost nothing.
const pollInterval = 700 * time.Millisecond

// NewSource returns the clipboard as a source; replies it takes are kept
// in keptDir once settled.
func NewSource(cb *Clipboard, keptDir string) *Source {
	return &Source{cb: cb, kept: keptDir, taken: map[string]string{}}
}

// Where says where replies are awaited, for the person.
func (s *Source) Where() string { return "on the clipboard" }

// Next implements runner.Source.
func (s *Source) Next(ctx context.Context, req runner.Request) (reply.Reply, error) {
	if !s.started {
		s.started = true
		s.last, _ = s.cb.Paste()
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return reply.Reply{}, ctx.Err()
		case <-tick.C:
		}
		text, err := s.cb.Paste()
		if err != nil || text == s.last {
			continue
		}
		s.last = text
		stamp := time.Now().Format("20060102-150405.000")
		name := "clipboard " + stamp
		rep, err := reply.New(name, text, req.MaxReply, req.FrontEnd)
		if err != nil || len(rep.Parsed.Commands) == 0 {
			continue // not an answer: a request, other text, or too large
		}
		if id := rep.Route(req.Protocols...); id != "" && id != req.Session {
			continue
		}
		s.taken[name], s.session = text, req.Session
		return rep, nil
	}
}

// Settle implements runner.Source: the reply is kept in the record folder,
// as replies saved into the inbox are.
func (s *Source) Settle(name, _ string, _ runner.Settlement) (string, error) {
	text, ok := s.taken[name]
	if !ok {
		return "", nil
	}
	delete(s.taken, name)
	p := filepath.Join(s.kept, fmt.Sprintf("%s_reply_%s.txt", s.session, strings.TrimPrefix(name, "clipboard ")))
	err := os.MkdirAll(s.kept, 0o755)
	if err == nil {
		err = atomicfile.Write(p, []byte(text), 0o644)
	}
	if err != nil {
		return "", fmt.Errorf("keep clipboard reply: %w", err)
	}
	return p, nil
}
