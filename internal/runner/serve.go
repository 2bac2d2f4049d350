package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/textdist"
)

// Source gives a session its replies (inbox, clipboard, agent). Next
// waits for the next reply to req (ErrExhausted: no more); Settle is told
// what became of a reply and returns where it moved it.
type Source interface {
	Next(ctx context.Context, req Request) (reply.Reply, error)
	Settle(name, hash string, how Settlement) (string, error)
}

// Settlement is what became of a reply.
type Settlement int

// The settlements.
const (
	Applied   Settlement = iota // the reply's turn was committed
	Duplicate                   // applied before
	Outdated                    // answers another request
	// Skipped: it belongs to another session; it stays, not offered
	// again while unchanged.
	Skipped
)

// Serve runs the held session's turns until it is complete, the source
// has no more, a question is left unanswered (*WaitingError), or ctx ends.
func (s *Session) Serve(ctx context.Context, src Source) (err error) {
	defer func() { err = interrupted(ctx, s.st.SessionID, err) }()
	if s.st.IsComplete {
		return &CompleteError{Session: s.st.SessionID}
	}
	settle := func(name, hash string) { s.settle(src, name, hash, Applied) }
	if _, err := s.Recover(ctx, settle); err != nil {
		return err
	}
	where, waits := src.(interface{ Where() string })
	resumed := s.r.created != s.st.SessionID
	unapplied := 0
	waited := 0 // the request last announced as waited for
	for !s.st.IsComplete {
		req, err := s.request()
		if err != nil {
			return err
		}
		if waits && waited != req.Sequence {
			// A person watches a source that waits, and is shown the request.
			if resumed {
				s.r.cfg.Reporter.RequestWritten(RequestWritten{Session: req.Session, Sequence: req.Sequence, Path: req.Path, Text: req.Text, Size: int64(len(req.Text)), Tokens: human.Tokens(req.Text), Resumed: true})
			}
			s.r.cfg.Reporter.WaitingForReply(WaitingForReply{Session: req.Session, Sequence: req.Sequence, From: where.Where()})
			waited = req.Sequence
		}
		resumed = false
		s.lock.Note(fmt.Sprintf("waiting for a reply to request %d", req.Sequence))
		rep, err := s.next(ctx, src, req, waits)
		if errors.Is(err, errWords) {
			if _, err := s.hear(); err != nil {
				return err
			}
			continue
		}
		var skipped *SkippedError
		var aside *SetAsideError
		switch {
		case errors.As(err, &skipped) && skipped.Why == "" && !s.r.exists(skipped.Session):
			// A reply for no session at all would wait forever: set it aside.
			s.setAside(src, skipped.Reply, skipped.Hash, s.r.noSuchSession(skipped.Reply, skipped.Session))
			unapplied++
			continue
		case errors.As(err, &skipped):
			s.r.cfg.Reporter.ReplySkipped(ReplySkipped{Name: skipped.Reply, Session: skipped.Session, Why: skipped.Why})
			continue
		case errors.As(err, &aside):
			s.r.cfg.Reporter.ReplySetAside(ReplySetAside{Name: aside.Reply, Err: aside.Err, MovedTo: aside.MovedTo})
			unapplied++
			continue
		case errors.Is(err, ErrExhausted) && unapplied > 0:
			return &UnappliedError{Count: unapplied}
		case errors.Is(err, ErrExhausted):
			return nil
		case err != nil:
			return err
		}
		err = s.apply(ctx, rep)
		var refused *RefusedError
		switch {
		case errors.As(err, new(*EmptyReplyError)):
			s.setAside(src, rep.Name, rep.Hash, err)
			unapplied++
		case errors.As(err, &skipped):
			s.settle(src, rep.Name, rep.Hash, Skipped)
			s.r.cfg.Reporter.ReplySkipped(ReplySkipped{Name: skipped.Reply, Session: skipped.Session})
		case errors.As(err, &refused):
			how := Duplicate
			if !refused.Duplicate {
				how = Outdated
				unapplied++
			}
			moved, _ := src.Settle(rep.Name, rep.Hash, how)
			s.r.cfg.Reporter.ReplyRefused(ReplyRefused{Name: rep.Name, Reason: refused.Reason, MovedTo: moved, Duplicate: refused.Duplicate})
		case err != nil:
			return err
		default:
			settle(rep.Name, rep.Hash)
		}
	}
	return nil
}

// errWords: the person said something, or asked an undo, meanwhile.
var errWords = errors.New("the person said something")

// next asks src for the next reply; with listen, words stop the wait.
func (s *Session) next(ctx context.Context, src Source, req Request, listen bool) (reply.Reply, error) {
	if !listen {
		return src.Next(ctx, req)
	}
	if s.r.hasWords(s.st.SessionID) {
		return reply.Reply{}, errWords
	}
	rep, heard, err := whileNot(ctx, func(nctx context.Context) (reply.Reply, error) {
		return src.Next(nctx, req)
	}, func() (bool, error) { return s.r.hasWords(s.st.SessionID), nil })
	if heard && ctx.Err() == nil && errors.Is(err, context.Canceled) {
		return reply.Reply{}, errWords
	}
	return rep, err
}

// setAside moves a reply that will never be applied out of the way.
func (s *Session) setAside(src Source, name, hash string, why error) {
	moved, _ := src.Settle(name, hash, Outdated)
	s.r.cfg.Reporter.ReplySetAside(ReplySetAside{Name: name, Err: why, MovedTo: moved})
}

// settle tells the source what became of a reply; the turn is committed,
// so a failure is a warning.
func (s *Session) settle(src Source, name, hash string, how Settlement) {
	if _, err := src.Settle(name, hash, how); err != nil {
		s.r.cfg.Reporter.Warning(Warning{Message: err.Error()})
	}
}

// RoutedSource tells which session its replies are for ("": none named).
type RoutedSource interface {
	Source
	Route(protocols []frontend.FrontEnd, maxReply int64) (string, error)
}

// ApplyFrom applies the replies of src to the session id, else the one
// they name, else the latest incomplete one.
func (r *Runner) ApplyFrom(ctx context.Context, src RoutedSource, id, what string) error {
	if id == "" {
		var err error
		if id, err = src.Route(r.cfg.FrontEnds, r.cfg.Limits.MaxReply); err != nil {
			return err
		}
	}
	return r.holding(id, what, func(s *Session) error { return s.Serve(ctx, src) })
}

// holding runs do on session id held under its lock.
func (r *Runner) holding(id, what string, do func(*Session) error) error {
	s, err := r.Hold(id, what)
	if err != nil {
		return err
	}
	defer s.Release()
	return do(s)
}

// Queue is the replies waiting for several sessions (the inbox): Sessions
// lists them, oldest reply first ("": naming none); Source gives those of
// session id, and with unnamed those naming none.
type Queue interface {
	Sessions(protocols []frontend.FrontEnd, maxReply int64) ([]string, error)
	Source(id string, unnamed bool) Source
}

// BatchError holds the errors of the sessions a batch could not finish.
type BatchError struct{ Errs []error }

func (e *BatchError) Error() string {
	return fmt.Sprintf("%d sessions could not be finished: %v", len(e.Errs), errors.Join(e.Errs...))
}

// ProcessQueue finishes every unfinished turn that does not wait for the
// person, then applies the replies in q, session by session. A question
// or ctx ends it; other failures are collected in a *BatchError.
func (r *Runner) ProcessQueue(ctx context.Context, q Queue, what string) error {
	var errs []error
	all, _ := r.store.List()
	for _, st := range all {
		if _, ok, _ := r.store.Unfinished(st); (!ok || st.Pending != nil) && st.Undoing == nil {
			continue
		}
		src := q.Source(st.SessionID, false)
		err := r.holding(st.SessionID, what, func(s *Session) error {
			_, err := s.Recover(ctx, func(name, hash string) { s.settle(src, name, hash, Applied) })
			return err
		})
		if err != nil && stops(ctx, err) {
			return err
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	ids, err := q.Sessions(r.cfg.FrontEnds, r.cfg.Limits.MaxReply)
	if err != nil {
		return err
	}
	// Replies naming no session go to the latest incomplete one.
	def := ""
	var order []string
	for _, id := range ids {
		if id == "" {
			st, err := r.latest(false)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			def, id = st.SessionID, st.SessionID
		}
		if !slices.Contains(order, id) {
			order = append(order, id)
		}
	}
	unapplied := 0
	for _, id := range order {
		if !r.exists(id) {
			unapplied += r.setAsideAll(ctx, q.Source(id, false), id)
			continue
		}
		err := r.holding(id, what, func(s *Session) error { return s.Serve(ctx, q.Source(id, id == def)) })
		var un *UnappliedError
		switch {
		case errors.As(err, &un):
			unapplied += un.Count
		case err != nil && stops(ctx, err):
			return err
		case err != nil:
			errs = append(errs, err)
		}
	}
	if unapplied > 0 {
		errs = append(errs, &UnappliedError{Count: unapplied})
	}
	if len(errs) > 0 {
		return &BatchError{Errs: errs}
	}
	return nil
}

// stops reports whether err ends a batch: a question, or a stop.
func stops(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.As(err, new(*WaitingError))
}

func (r *Runner) exists(id string) bool {
	_, err := r.store.Load(id)
	return err == nil
}

// noSuchSession is the error of a reply naming no existing session, with
// one a slip away if any.
func (r *Runner) noSuchSession(reply, id string) error {
	all, _ := r.store.List()
	ids := make([]string, len(all))
	for i, st := range all {
		ids[i] = st.SessionID
	}
	if near := textdist.Nearest(id, ids); near != "" {
		return fmt.Errorf("reply %s: no session %s; did you mean %s? It was set aside", reply, id, near)
	}
	return fmt.Errorf("reply %s names session %s, which does not exist; it was set aside", reply, id)
}

// setAsideAll moves every reply for a session that does not exist away.
func (r *Runner) setAsideAll(ctx context.Context, src Source, id string) (n int) {
	req := Request{Session: id, FrontEnd: r.cfg.FrontEnds[0], Protocols: r.cfg.FrontEnds, MaxReply: r.cfg.Limits.MaxReply}
	for {
		rep, err := src.Next(ctx, req)
		var aside *SetAsideError
		var skipped *SkippedError
		switch {
		case errors.As(err, &aside):
			r.cfg.Reporter.ReplySetAside(ReplySetAside{Name: aside.Reply, Err: aside.Err, MovedTo: aside.MovedTo})
			n++
			continue
		case errors.As(err, &skipped):
			continue
		case err != nil:
			return n
		}
		moved, _ := src.Settle(rep.Name, rep.Hash, Outdated)
		r.cfg.Reporter.ReplySetAside(ReplySetAside{Name: rep.Name, Err: r.noSuchSession(rep.Name, id), MovedTo: moved})
		n++
	}
}

// Either is a source taking the first reply any of sources gives.
func Either(sources ...Source) Source {
	return &either{sources: sources, from: map[string]Source{}}
}

type either struct {
	sources []Source
	held    []result // arrived after another source won a call
	from    map[string]Source
}

type result struct {
	src Source
	rep reply.Reply
	err error
}

// Where joins the places the sources wait at.
func (e *either) Where() string {
	var ws []string
	for _, s := range e.sources {
		if w, ok := s.(interface{ Where() string }); ok {
			ws = append(ws, w.Where())
		}
	}
	return strings.Join(ws, " or ")
}

// Next implements Source.
func (e *either) Next(ctx context.Context, req Request) (reply.Reply, error) {
	if len(e.held) > 0 {
		r := e.held[0]
		e.held = e.held[1:]
		return e.take(r)
	}
	cctx, cancel := context.WithCancel(ctx)
	results := make(chan result, len(e.sources))
	for _, s := range e.sources {
		go func() {
			rep, err := s.Next(cctx, req)
			results <- result{s, rep, err}
		}()
	}
	var first *result
	exhausted := 0
	for range e.sources {
		r := <-results
		switch {
		case first == nil && errors.Is(r.err, ErrExhausted):
			exhausted++
			if exhausted == len(e.sources) {
				first = &r
			}
		case first == nil && (r.err == nil || cctx.Err() == nil):
			first = &r
			cancel()
		case r.err == nil:
			e.held = append(e.held, r)
		}
	}
	cancel()
	if first == nil {
		return reply.Reply{}, ctx.Err()
	}
	return e.take(*first)
}

func (e *either) take(r result) (reply.Reply, error) {
	if r.err == nil {
		e.from[r.rep.Name] = r.src
	}
	return r.rep, r.err
}

// Settle: the source of the reply settles it; one a recovered turn names
// is offered to each.
func (e *either) Settle(name, hash string, how Settlement) (string, error) {
	if s, ok := e.from[name]; ok {
		delete(e.from, name)
		return s.Settle(name, hash, how)
	}
	for _, s := range e.sources {
		if moved, err := s.Settle(name, hash, how); err != nil || moved != "" {
			return moved, err
		}
	}
	return "", nil
}
