package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/pack"
	"github.com/courier-agent/courier/internal/workspace"
)

// Request is the request a session waits to have answered: its file in
// outbox/ and text, the front end reading replies to it, every protocol
// (to tell which session a reply names), and the largest reply accepted.
type Request struct {
	Session    string
	Sequence   int
	Path, Text string
	FrontEnd   frontend.FrontEnd
	Protocols  []frontend.FrontEnd
	MaxReply   int64
}

func (r *Runner) requestPath(id string, seq int) string {
	return filepath.Join(r.cfg.Paths.Outbox, fmt.Sprintf("%s_seq%04d.txt", id, seq))
}

// saveWithRequest writes next's request, then saves next (a new session
// when create is set): a state always has its request. The request is not
// synced: the state records its size and checksum, and one a power cut
// damaged is written again (see readRequest).
func (r *Runner) saveWithRequest(next *history.State, create bool) (RequestWritten, error) {
	p := r.requestPath(next.SessionID, next.SequenceNumber)
	w := RequestWritten{Session: next.SessionID, Sequence: next.SequenceNumber, Path: p}
	var err error
	if w.Text, w.Parts, err = r.render(next, true); err != nil {
		return w, err
	}
	w.Size, w.Tokens = int64(len(w.Text)), human.Tokens(w.Text)
	next.RequestSize, next.RequestSum = w.Size, crc32.Checksum([]byte(w.Text), sumTable())
	req, err := atomicfile.StageUnsynced(p, []byte(w.Text), 0o644)
	if err != nil {
		return w, fmt.Errorf("write request: %w", err)
	}
	stage := r.store.Stage
	if create {
		stage = r.store.StageNew
	}
	state, err := stage(next)
	if err != nil {
		req.Abort()
		return RequestWritten{}, err
	}
	if err := atomicfile.CommitInOrder(req, state); err != nil {
		if create {
			// A request with no session is of no use.
			os.Remove(w.Path)
		}
		return RequestWritten{}, fmt.Errorf("write request and session %s: %w", next.SessionID, err)
	}
	return w, nil
}

// sumTable is the CRC-32C a request is recorded with.
func sumTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

var errDamaged = errors.New("its file is not as courier wrote it")

// readRequest reads the session's current request, checked against the
// size and checksum the state recorded (errDamaged: a power cut).
func (r *Runner) readRequest(st *history.State) (string, error) {
	data, err := os.ReadFile(r.requestPath(st.SessionID, st.SequenceNumber))
	if err != nil {
		return "", err
	}
	if st.RequestSize > 0 && (int64(len(data)) != st.RequestSize || crc32.Checksum(data, sumTable()) != st.RequestSum) {
		return "", errDamaged
	}
	return string(data), nil
}

// render writes the session's current request from its state and the
// workspace now, and the sizes of its parts. Only with probe is the
// machine probed: 'courier show' runs nothing.
func (r *Runner) render(st *history.State, probe bool) (string, []frontend.Part, error) {
	fe, err := r.FrontEnd(st.Protocol)
	if err != nil {
		return "", nil, err
	}
	ws, err := r.openWorkspace(st)
	if err != nil {
		return "", nil, err
	}
	defer ws.Close()
	fresh := st.SequenceNumber == 1 || st.NewChat
	// An ignore file past courier's bounds is told of once a session.
	var cuts []string
	files, err := ws.List(workspace.ListOptions{MaxEntries: r.cfg.Limits.ListLimit, GitIgnore: true, IgnoreCut: func(p string, n int) {
		if !slices.Contains(st.IgnoreCut, p) {
			st.IgnoreCut = append(slices.Clip(st.IgnoreCut), p)
			cuts = append(cuts, workspace.IgnoreCutNote(p, n))
		}
	}})
	if err != nil {
		return "", nil, err
	}
	for _, c := range cuts {
		if probe { // not for a command that only reads
			r.cfg.Reporter.Warning(Warning{Message: c, Hint: "make the file smaller to have all of it used"})
		}
	}
	v := &view{Request: frontend.Request{
		Session:   st.SessionID,
		Sequence:  st.SequenceNumber,
		Task:      st.Task,
		FollowUps: st.FollowUps,
		Prompt:    st.Prompt,
		Reminder:  r.cfg.ProtocolOnce && !fresh,
		Messages:  st.Messages,
		Files:     files,
		Notices:   append(slices.Clip(st.Notices), cuts...),
		ReadLines: r.cfg.Limits.ReadLines,
		ReadBytes: r.readRoom(),
	}, r: r, st: st, ws: ws, fe: fe}
	if fresh && r.cfg.Environment {
		// Kept in the state until a new chat: for 'show --full' too.
		if st.Environment == "" && probe {
			st.Environment = engine.New(ws, nil, r.cfg.Commands).Describe(context.Background(), st.SessionID).Text(fe.Words())
		}
		v.Environment = st.Environment
	}
	if st.SequenceNumber > 1 {
		v.Results = st.LastResults
		if v.Results == nil {
			v.Results = []command.Result{}
		}
	}
	text, parts := fe.Render(v)
	return text, parts, nil
}

// view is a turn as the runner hands it to a front end. The listing is
// read at once, as its error ends the request and what it cut is a
// notice; the other pieces when the front end asks for them.
type view struct {
	frontend.Request
	r     *Runner
	st    *history.State
	ws    *workspace.Workspace
	fe    frontend.FrontEnd
	read  bool     // Requested, LeftOut and shown are read
	shown []string // see requestedShown
}

func (v *view) RequestedFiles() ([]frontend.FileContent, string) {
	if !v.read {
		v.read = true
		v.Requested, v.shown, v.LeftOut = v.r.requestedShown(v.ws, v.st.ReadFileRequests, v.fe.Words())
	}
	return v.Requested, v.LeftOut
}

// LastResults name the lines of a file the request shows (see
// withShownRanges), so the requested files are read first.
func (v *view) LastResults() []command.Result {
	v.RequestedFiles()
	return withShownRanges(v.Results, v.st.ReadFileRequests, v.shown)
}

func (v *view) LastCommands() []command.Command {
	if v.Sequence == 1 {
		return nil
	}
	return v.r.lastCommands(v.st)
}

// FirstPack is the first request's pack, in the room the rest of the
// request leaves within the token budget.
func (v *view) FirstPack() *frontend.Pack {
	if v.Sequence != 1 || len(v.st.Includes) == 0 {
		return nil
	}
	found := pack.Find(v.ws, pack.Options{Include: v.st.Includes, Task: v.Task, MaxListed: v.r.cfg.Limits.ListLimit, MaxLineLen: maxLineLen, Words: v.fe.Words()})
	budget := 0
	if b := v.r.cfg.Limits.TokenBudget; b > 0 {
		text, _ := v.fe.Render(noPack{v})
		// A twentieth is kept for the pack's own notes.
		budget = max(1, (b-utf8.RuneCountInString(text)/4)*4*19/20)
	}
	return found.Stream(budget)
}

// noPack is a turn without its pack, to measure the rest of its request.
type noPack struct{ frontend.Turn }

func (noPack) FirstPack() *frontend.Pack { return nil }

// request returns the session's current request, written again if its
// file is missing or damaged.
func (s *Session) request() (Request, error) {
	p := s.r.requestPath(s.st.SessionID, s.st.SequenceNumber)
	req := Request{Session: s.st.SessionID, Sequence: s.st.SequenceNumber, Path: p, FrontEnd: s.fe, Protocols: s.r.cfg.FrontEnds, MaxReply: s.r.cfg.Limits.MaxReply}
	text, err := s.r.readRequest(s.st)
	if err == nil {
		req.Text = text
		return req, nil
	}
	damaged := errors.Is(err, errDamaged)
	next := *s.st
	w, err := s.r.saveWithRequest(&next, false)
	if err != nil {
		return req, err
	}
	*s.st = next
	req.Text = w.Text
	w.Rewritten, w.Damaged, w.Resumed = true, damaged, true
	s.r.cfg.Reporter.RequestWritten(w)
	return req, nil
}

// RequestText returns the current (or a complete session's last) request
// of a session (the named one, or the latest), changing nothing; full
// gives it as a fresh chat needs it, with the whole protocol and the
// machine's description.
func (r *Runner) RequestText(id string, full bool) (string, error) {
	st, err := r.resolve(id, true)
	if err != nil {
		return "", err
	}
	text, err := r.readRequest(st)
	switch {
	case err == nil:
	case st.IsComplete:
		// Its results are the last turn's, not the ones it showed.
		return "", fmt.Errorf("session %s is complete and its last request is gone: %w", st.SessionID, err)
	default:
		if text, _, err = r.render(st, false); err != nil {
			return "", err
		}
	}
	if full {
		return r.fullRequest(st, text)
	}
	return text, nil
}

// The marks that open a request's sections; every front end writes them.
const (
	protocolMark = "\n=== PROTOCOL ===\n"
	contextMark  = "\n=== CONTEXT ===\n"
	envHeading   = "## Environment\n"
)

// fullRequest returns text, a request of st, with the whole protocol and
// the machine's description an earlier request showed.
func (r *Runner) fullRequest(st *history.State, text string) (string, error) {
	fe, err := r.FrontEnd(st.Protocol)
	if err != nil {
		return "", err
	}
	first, _ := fe.Render(frontend.Request{Session: st.SessionID, Sequence: 1})
	whole, ok := between(first, protocolMark, contextMark)
	if shown, ok2 := between(text, protocolMark, contextMark); ok && ok2 && shown != whole {
		text = strings.Replace(text, protocolMark+shown+contextMark, protocolMark+whole+contextMark, 1)
	}
	if i := strings.Index(text, contextMark); i >= 0 && st.Environment != "" && !strings.HasPrefix(text[i+len(contextMark):], envHeading) {
		at := i + len(contextMark)
		text = text[:at] + envHeading + strings.TrimRight(st.Environment, "\n") + "\n\n" + text[at:]
	}
	return text, nil
}

func between(text, from, to string) (string, bool) {
	_, rest, ok := strings.Cut(text, from)
	if !ok {
		return "", false
	}
	in, _, ok := strings.Cut(rest, to)
	return in, ok
}

func (r *Runner) resolve(id string, anyState bool) (*history.State, error) {
	if id == "" {
		return r.latest(anyState)
	}
	return r.store.Load(id)
}

// lastCommands returns the commands whose results the request shows:
// the last turn's, or rebuilt from the results.
func (r *Runner) lastCommands(st *history.State) []command.Command {
	if t, err := r.store.ReadTurn(st.SessionID, st.SequenceNumber-1); err == nil {
		begin, _ := t.Begun()
		if cmds, err := begin.AllCommands(); err == nil && len(cmds) == len(st.LastResults) {
			return cmds
		}
	}
	cmds := make([]command.Command, len(st.LastResults))
	for i, res := range st.LastResults {
		cmds[i] = command.Command{Type: res.Type, Path: res.Path, Command: res.Command}
	}
	return cmds
}
