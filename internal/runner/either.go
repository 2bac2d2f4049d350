package runner

import (
	"context"
	"errors"
	"strings"

	"github.com/courier-agent/courier/internal/reply"
)

// Either is a source made of several, taking the first reply any of them
// gives (the inbox folder and the clipboard, watched at once).
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

// Settle implements Source: the source the reply came from settles it; a
// reply a recovered turn names is offered to each.
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
