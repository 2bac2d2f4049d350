package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/hint"
	"github.com/courier-agent/courier/internal/loop"
	"github.com/courier-agent/courier/internal/session"
)

// newConsole returns the console printer for a command: colour only on a
// terminal and as the color setting allows, progress only on a terminal.
func (g *globals) newConsole(l *loop.Loop) *console {
	c := &console{w: g.io.Out, root: l.Paths.Root, quiet: g.quiet}
	switch g.cfg.Color {
	case config.ColorAlways:
		c.color = true
	case config.ColorAuto:
		c.color = g.io.OutTerminal
	}
	if g.io.ErrTerminal {
		c.progress = &progress{w: g.io.Err}
	}
	return c
}

// held is a session loaded under its lock.
type held struct {
	st   *session.State
	lock *session.Lock
}

func (h *held) release() { h.lock.Unlock() }

// hold locks a session (the named one, or the latest incomplete) and loads
// its state under the lock, so nothing changes it behind courier's back.
func (g *globals) hold(l *loop.Loop, id, what string) (*held, error) {
	if id == "" {
		st, err := l.Store.Latest()
		if err != nil {
			return nil, err
		}
		id = st.SessionID
	}
	if !session.ValidID(id) {
		return nil, hint.Wrap(fmt.Errorf("'%s' is not a session id (8 hex digits)", id), "run 'courier sessions' to list the sessions")
	}
	lock, err := l.Store.Lock(id, what)
	if err != nil {
		return nil, err
	}
	st, err := l.Store.Load(id)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	if g.set["workspace"] && filepath.Clean(st.Workspace) != filepath.Clean(l.Paths.Workspace) {
		lock.Unlock()
		return nil, hint.Wrap(fmt.Errorf("session %s works on %s, not on %s", id, st.Workspace, l.Paths.Workspace),
			"leave out --workspace to resume it, or start a new session for the other folder")
	}
	return &held{st: st, lock: lock}, nil
}

// recoverTurn finishes a turn an earlier run left unfinished (a crash, a
// Ctrl-C, an approval), telling the person about it.
func (g *globals) recoverTurn(ctx context.Context, l *loop.Loop, h *held, con *console) (loop.Outcome, bool, error) {
	if rep, ok, err := l.FinishUndo(h.st); err != nil {
		return loop.Outcome{}, false, err
	} else if ok {
		fmt.Fprintf(g.io.Out, "Session %s: finished the undo of the reply to request %d, which was interrupted; next request: %s\n",
			h.st.SessionID, rep.Sequence, con.rel(rep.Outbox))
	}
	file, ok := l.Unfinished(h.st)
	if !ok {
		return loop.Outcome{}, false, nil
	}
	opts, err := g.engineOptions(con)
	if err != nil {
		return loop.Outcome{}, false, err
	}
	if h.st.Pending != nil {
		fmt.Fprintf(g.io.Out, "Session %s: continuing reply %s to request %d\n", h.st.SessionID, file, h.st.SequenceNumber)
	} else {
		fmt.Fprintf(g.io.Out, "Session %s: finishing reply %s to request %d, which was not finished\n", h.st.SessionID, file, h.st.SequenceNumber)
	}
	out, ok, err := l.Recover(ctx, h.st, opts)
	if err != nil || !ok {
		return out, ok, err
	}
	g.reportTurn(con, out)
	return out, true, nil
}

// reportTurn prints the end of a turn: its summary, then the next request
// and what to do with it.
func (g *globals) reportTurn(con *console, out loop.Outcome) {
	con.summary(out)
	if out.Outbox != "" {
		g.announce(con, out.Outbox)
	}
}

// readReply reads a reply file; one that cannot be applied at all (too
// large, not text) is moved out of the inbox so it is not tried again.
func (g *globals) readReply(l *loop.Loop, path string, con *console) (loop.Reply, error) {
	r, err := l.ReadReply(path)
	if err != nil {
		if moved, mvErr := l.Reject(path); mvErr == nil && moved != "" {
			err = fmt.Errorf("%w (moved to %s)", err, con.rel(moved))
		}
	}
	return r, err
}

// apply applies a reply to the held session and prints the turn. Refused
// replies (duplicates, stale answers) are reported as warnings and return
// a *loop.RefusedError.
func (g *globals) apply(ctx context.Context, l *loop.Loop, h *held, r loop.Reply, con *console) (loop.Outcome, error) {
	opts, err := g.engineOptions(con)
	if err != nil {
		return loop.Outcome{}, err
	}
	fmt.Fprintf(g.io.Out, "Reply %s → session %s, request %d\n", con.rel(r.Path), h.st.SessionID, h.st.SequenceNumber)
	out, err := l.Process(ctx, h.st, r, opts)
	var refused *loop.RefusedError
	if errors.As(err, &refused) {
		fmt.Fprintf(g.io.Err, "courier: warning: %s\n", refused.Reason)
		if refused.MovedTo != "" {
			fmt.Fprintf(g.io.Err, "courier: hint: moved to %s\n", con.rel(refused.MovedTo))
		}
		return out, err
	}
	if err != nil {
		return out, err
	}
	g.reportTurn(con, out)
	return out, nil
}

// optionalArg returns the single optional argument, or "".
func optionalArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return ""
}

// resolve loads the named session, or the most recently updated incomplete
// one, for commands that only read it.
func (g *globals) resolve(id string) (*loop.Loop, *session.State, error) {
	l, err := g.loop()
	if err != nil {
		return nil, nil, err
	}
	st, err := l.Store.Resolve(id)
	if err != nil {
		return nil, nil, err
	}
	return l, st, nil
}
