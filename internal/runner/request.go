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

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/pack"
	"github.com/courier-agent/courier/internal/workspace"
)

// Request is the request a session waits to have answered.
type Request struct {
	Session  string
	Sequence int
	// Path is the request's file in outbox/; Text its content.
	Path string
	Text string
	// FrontEnd reads the replies to it; Protocols are every protocol
	// courier speaks, to tell which session a reply names (see
	// reply.Reply.Route).
	FrontEnd  frontend.FrontEnd
	Protocols []frontend.FrontEnd
	// MaxReply is the largest reply accepted, in bytes.
	MaxReply int64
}

// requestPath is where the request of a sequence of a session lives.
func (r *Runner) requestPath(id string, seq int) string {
	return filepath.Join(r.cfg.Paths.Outbox, fmt.Sprintf("%s_seq%04d.txt", id, seq))
}

// saveWithRequest writes next's request, then saves next (a new session
// when create is set), as one commit: both files are written, then the
// request is put in place before the state, so that a state always has
// its request while the machine runs. The request is not synced: the state records
// its size and checksum, and a request a power cut left missing or
// damaged is written again from the state (see readRequest). The sync of
// the state then does not wait behind a request of megabytes on the disk.
func (r *Runner) saveWithRequest(next *history.State, create bool) (RequestWritten, error) {
	w, req, sum, err := r.stageRequest(next)
	if err != nil {
		return RequestWritten{}, err
	}
	next.RequestSize, next.RequestSum = w.Size, sum
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

// stageRequest renders the session's current request and writes it under
// a temporary name, which the file's commit puts in place. It returns the
// request's CRC-32C too.
func (r *Runner) stageRequest(st *history.State) (RequestWritten, *atomicfile.File, uint32, error) {
	p := r.requestPath(st.SessionID, st.SequenceNumber)
	w := RequestWritten{Session: st.SessionID, Sequence: st.SequenceNumber, Path: p}
	var f *atomicfile.File
	var sum uint32
	err := r.compose(st, true, func(fe frontend.FrontEnd, req frontend.Request) error {
		var err error
		if req.Pack == nil {
			w.Text, w.Parts = fe.Render(req)
			w.Size = int64(len(w.Text))
			data := []byte(w.Text)
			sum = crc32.Checksum(data, sumTable())
			f, err = atomicfile.StageUnsynced(p, data, 0o644)
		} else {
			f, w.Size, w.Tokens, sum, w.Parts, err = writePacked(p, fe, req)
		}
		if err != nil {
			return fmt.Errorf("write request: %w", err)
		}
		return nil
	})
	if err != nil {
		return RequestWritten{}, nil, 0, err
	}
	return w, f, sum, nil
}

// sumTable is the table of the checksum (CRC-32C) a request is recorded
// with.
func sumTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// errDamaged says a request's file is not as courier wrote it.
var errDamaged = errors.New("its file is not as courier wrote it")

// readRequest reads the session's current request from its file, checked
// against the size and checksum the state recorded: requests are not
// synced to the disk, and after a power cut a request's file may be
// short, or hold zeros (errDamaged). A state written before they were
// recorded is taken at its file's word.
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

// render builds the text of the session's current request from its state
// and the workspace as it is now (see compose).
func (r *Runner) render(st *history.State, probe bool) (string, error) {
	var text string
	err := r.compose(st, probe, func(fe frontend.FrontEnd, req frontend.Request) error {
		text, _ = fe.Render(req)
		return nil
	})
	return text, err
}

// compose gathers what the session's current request shows, from its
// state and the workspace as it is now, and hands it to use while the
// workspace is open: a first request's pack is read as use writes it. The
// machine is described (its tools probed, in the sandbox) only when probe
// is set: a command that only reads, such as 'courier show', runs nothing
// and creates nothing, and takes the description an earlier request
// showed.
func (r *Runner) compose(st *history.State, probe bool, use func(frontend.FrontEnd, frontend.Request) error) error {
	fe, err := r.frontEnd(st)
	if err != nil {
		return err
	}
	ws, err := r.openWorkspace(st)
	if err != nil {
		return err
	}
	defer ws.Close()
	fresh := st.SequenceNumber == 1 || st.NewChat
	var probed chan string
	if fresh && r.cfg.Environment && st.Environment == "" && probe {
		// The probe of the machine waits on the slowest tool to say its
		// version: it runs while the workspace is listed and packed, and
		// is waited for before the workspace is closed, whatever happens.
		probed = make(chan string, 1)
		go func() {
			probed <- engine.New(ws, nil, r.cfg.Commands).Describe(context.Background(), st.SessionID).Text(fe.Words())
		}()
		defer func() {
			if probed != nil {
				<-probed
			}
		}()
	}
	var found chan *pack.Found
	if st.SequenceNumber == 1 && len(st.Includes) > 0 {
		// The files to pack are found while the workspace is listed: two
		// walks at once. Waited for before the workspace is closed.
		found = make(chan *pack.Found, 1)
		go func() { found <- r.findPack(ws, st, fe) }()
		defer func() {
			if found != nil {
				<-found
			}
		}()
	}
	// An ignore file past courier's bounds is told of once a session, to
	// the LLM and to the person.
	var cuts []string
	files, err := ws.List(workspace.ListOptions{MaxEntries: r.cfg.Limits.ListLimit, GitIgnore: true, IgnoreCut: func(p string, n int) {
		if !slices.Contains(st.IgnoreCut, p) {
			st.IgnoreCut = append(slices.Clip(st.IgnoreCut), p)
			cuts = append(cuts, workspace.IgnoreCutNote(p, n))
		}
	}})
	if err != nil {
		return err
	}
	for _, c := range cuts {
		if probe { // not for a command that only reads
			r.report(Warning{Message: c, Hint: "make the file smaller to have all of it used"})
		}
	}
	req := frontend.Request{
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
	}
	if fresh && r.cfg.Environment {
		if st.Environment == "" && !probe {
			st.Environment = r.shownEnvironment(st)
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
	var shown []string
	req.Requested, shown, req.LeftOut = r.requestedShown(ws, st.ReadFileRequests, fe.Words())
	req.Results = withShownRanges(req.Results, st.ReadFileRequests, shown)
	if probed != nil {
		// The pack fills the room the rest of the request leaves, the
		// description of the machine included.
		st.Environment = <-probed
		probed = nil
		req.Environment = st.Environment
	}
	if found != nil {
		req.Pack = r.pack(<-found, fe, req)
		found = nil
	}
	return use(fe, req)
}

// request returns the session's current request, writing it again if its
// file is missing or damaged (see readRequest).
func (s *Session) request() (Request, error) {
	p := s.r.requestPath(s.st.SessionID, s.st.SequenceNumber)
	req := Request{Session: s.st.SessionID, Sequence: s.st.SequenceNumber, Path: p, FrontEnd: s.fe, Protocols: s.r.cfg.FrontEnds, MaxReply: s.r.cfg.Limits.MaxReply}
	text, err := s.r.readRequest(s.st)
	if err == nil {
		req.Text = text
		return req, nil
	}
	damaged := errors.Is(err, errDamaged)
	// Written again, the request shows the workspace as it is now: the
	// state records the new one's size and checksum.
	next := *s.st
	w, err := s.r.saveWithRequest(&next, false)
	if err != nil {
		return req, err
	}
	*s.st = next
	if req.Text, err = w.Content(); err != nil {
		return req, err
	}
	w.Rewritten, w.Damaged, w.Resumed = true, damaged, true
	s.r.report(w)
	return req, nil
}

// RequestText returns the current request of a session (the named one, or
// the most recently updated), or the last request of a complete one,
// without holding the session or changing anything: from its file, or
// rendered afresh when the file is missing. full gives it as a fresh chat
// needs it: with the whole protocol where protocol = "first" put the
// reminder, and with the machine's description.
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
		if text, err = r.render(st, false); err != nil {
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

// fullRequest returns text, a request of session st, with the session's
// whole protocol in its PROTOCOL section, and the machine's description
// an earlier request showed at the start of its CONTEXT when it has none.
func (r *Runner) fullRequest(st *history.State, text string) (string, error) {
	fe, err := r.frontEnd(st)
	if err != nil {
		return "", err
	}
	first, _ := fe.Render(frontend.Request{Session: st.SessionID, Sequence: 1})
	whole, ok := between(first, protocolMark, contextMark)
	if shown, ok2 := between(text, protocolMark, contextMark); ok && ok2 && shown != whole {
		text = strings.Replace(text, protocolMark+shown+contextMark, protocolMark+whole+contextMark, 1)
	}
	if i := strings.Index(text, contextMark); i >= 0 && !strings.HasPrefix(text[i+len(contextMark):], envHeading) {
		if env := r.shownEnvironment(st); env != "" {
			at := i + len(contextMark)
			text = text[:at] + envHeading + strings.TrimRight(env, "\n") + "\n\n" + text[at:]
		}
	}
	return text, nil
}

// between returns the text between the first from mark and the to mark
// after it.
func between(text, from, to string) (string, bool) {
	_, rest, ok := strings.Cut(text, from)
	if !ok {
		return "", false
	}
	in, _, ok := strings.Cut(rest, to)
	return in, ok
}

// shownEnvironment is the machine's description the session's latest
// request that had one showed, or "".
func (r *Runner) shownEnvironment(st *history.State) string {
	if st.Environment != "" {
		return st.Environment
	}
	for seq := st.SequenceNumber; seq >= 1; seq-- {
		data, err := os.ReadFile(r.requestPath(st.SessionID, seq))
		if err != nil {
			continue
		}
		_, ctx, ok := strings.Cut(string(data), contextMark)
		if env, ok2 := strings.CutPrefix(ctx, envHeading); ok && ok2 {
			env, _, _ = strings.Cut(env, "\n\n")
			return env + "\n"
		}
	}
	return ""
}

// resolve loads the named session, or the latest one (incomplete only
// unless anyState).
func (r *Runner) resolve(id string, anyState bool) (*history.State, error) {
	if id == "" {
		return r.latest(anyState)
	}
	return r.store.Load(id)
}

// lastCommands returns the commands whose results the session's request
// shows, from the journal of the turn before it. When the journal cannot
// give them one for one (it is gone, or the results are not a turn's),
// each is rebuilt from its result as far as the result tells.
func (r *Runner) lastCommands(st *history.State) []command.Command {
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
