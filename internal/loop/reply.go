package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/hint"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// Reply is a reply file read and parsed, not yet applied.
type Reply struct {
	Path string
	Raw  []byte
	// Hash identifies the reply's text whatever its encoding or line endings.
	Hash   string
	Parsed protocol.Reply
}

// ReadReply reads, decodes and parses a reply file, refusing one that is too
// large or not text before anything runs.
func (l *Loop) ReadReply(p string) (Reply, error) {
	f, err := os.Open(p)
	if err != nil {
		return Reply{}, fmt.Errorf("read reply: %w", err)
	}
	defer f.Close()
	raw, err := readLimited(f, l.opts.MaxReply+1)
	if err != nil {
		return Reply{}, fmt.Errorf("read reply %s: %w", p, err)
	}
	if int64(len(raw)) > l.opts.MaxReply {
		return Reply{}, hint.Wrap(fmt.Errorf("reply %s is larger than the %s limit; nothing was run", p, sizeText(l.opts.MaxReply)),
			"ask the LLM for a shorter answer, or raise max_reply in courier.toml")
	}
	text, err := protocol.Decode(raw)
	if err != nil {
		return Reply{}, hint.Wrap(fmt.Errorf("reply %s: %w; nothing was run", p, err),
			"save the LLM's answer as plain text")
	}
	if protocol.IsOutbox(text) {
		return Reply{}, hint.Wrap(fmt.Errorf("%s is a request written by courier, not the LLM's answer; nothing was run", p),
			"paste the request into the chat and save the chat's answer instead")
	}
	return Reply{Path: p, Raw: raw, Hash: hashText(raw, text), Parsed: protocol.Parse(text)}, nil
}

// hashText is session.Hash of text without a copy of the whole reply:
// Decode returns raw's own bytes when it had nothing to change, and other
// text is hashed in pieces.
func hashText(raw []byte, text string) string {
	if string(raw) == text {
		return session.Hash(raw)
	}
	h := sha256.New()
	buf := make([]byte, min(len(text), 64<<10))
	for rest := text; rest != ""; {
		n := copy(buf, rest)
		h.Write(buf[:n])
		rest = rest[n:]
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readLimited reads f whole, but at most limit bytes, into a buffer sized
// from the file's size, so a large reply is held once rather than in the
// doubling buffers of io.ReadAll.
func readLimited(f *os.File, limit int64) ([]byte, error) {
	size := int64(512)
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		size = min(info.Size()+1, limit) // +1 sees the end without growing
	}
	buf := make([]byte, 0, size)
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // the file grew while read
		}
		n, err := f.Read(buf[len(buf):min(int64(cap(buf)), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// sizeText writes a byte count in the largest unit that divides it, as
// courier.toml sizes are written ("2 MB", "512 KB", "1000 bytes").
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Route names the session a reply belongs to: the one it echoes, else the
// one its file name starts with, else "" (the caller's default).
func Route(r Reply) string {
	if r.Parsed.Session != "" {
		return r.Parsed.Session
	}
	base := strings.ToLower(filepath.Base(r.Path))
	if len(base) >= 8 && session.ValidID(base[:8]) && (len(base) == 8 || !isHex(base[8])) {
		return base[:8]
	}
	return ""
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
}

// RefusedError is a reply that is not applied: a duplicate or a stale
// answer. The reply is moved aside and the person told why.
type RefusedError struct {
	Reason string
	// MovedTo is where the reply went.
	MovedTo string
	// Duplicate is set when the reply was already applied.
	Duplicate bool
}

func (e *RefusedError) Error() string { return e.Reason }

// Process applies a reply to a session whose lock the caller holds.
func (l *Loop) Process(ctx context.Context, st *session.State, r Reply, opts engine.Options) (Outcome, error) {
	if st.IsComplete {
		return Outcome{}, hint.Wrap(fmt.Errorf("session %s is complete", st.SessionID), "start a new one with 'courier new'")
	}
	if begin, ok, err := l.Store.Unfinished(st); err != nil {
		return Outcome{}, err
	} else if ok && begin.ReplyHash != r.Hash {
		return Outcome{}, hint.Wrap(fmt.Errorf("session %s is still applying %s", st.SessionID, begin.ReplyFile),
			"finish that reply first: run 'courier process' or 'courier watch' (and answer its approval question if it waits for one)")
	} else if !ok {
		if err := l.check(st, r); err != nil {
			return Outcome{}, err
		}
	}
	eng, ws, err := l.engine(st, opts)
	if err != nil {
		return Outcome{}, err
	}
	defer ws.Close()
	out, err := eng.Apply(ctx, st, engine.Input{Raw: r.Raw, Hash: r.Hash, File: filepath.Base(r.Path), Commands: r.Parsed.Commands})
	if err != nil {
		return Outcome{State: st, Engine: out}, err
	}
	return l.finish(st, out, r.Path, r.Hash)
}

// check refuses a reply that was applied before or answers another request
// than the current one, moving it out of the inbox.
func (l *Loop) check(st *session.State, r Reply) error {
	if prev, ok := st.FindReply(r.Hash); ok {
		moved, _ := l.moveAside(r.Path, "processed")
		return &RefusedError{Duplicate: true, MovedTo: moved, Reason: fmt.Sprintf(
			"reply %s was already applied as the answer to request %d of session %s (on %s); it was not run again",
			filepath.Base(r.Path), prev.Sequence, st.SessionID, prev.AppliedAt.Local().Format("2006-01-02 15:04"))}
	}
	seq := r.Parsed.Sequence
	if seq != 0 && seq != st.SequenceNumber {
		moved, _ := l.moveAside(r.Path, "rejected")
		when := "an outdated request"
		if seq > st.SequenceNumber {
			when = "a request that does not exist yet"
		}
		return &RefusedError{MovedTo: moved, Reason: fmt.Sprintf(
			"reply %s answers request %d of session %s, %s: the current request is %d (%s); nothing was run",
			filepath.Base(r.Path), seq, st.SessionID, when, st.SequenceNumber, l.OutboxPath(st.SessionID, st.SequenceNumber))}
	}
	return nil
}

func (l *Loop) engine(st *session.State, opts engine.Options) (*engine.Engine, *workspace.Workspace, error) {
	ws, err := l.OpenWorkspace(st)
	if err != nil {
		return nil, nil, err
	}
	return engine.New(ws, l.Store, opts), ws, nil
}

// Recover finishes a turn that courier left unfinished (crash, Ctrl-C,
// approval). It reports false when there was none.
func (l *Loop) Recover(ctx context.Context, st *session.State, opts engine.Options) (Outcome, bool, error) {
	if err := l.cleanTemps(st.SessionID); err != nil {
		return Outcome{}, false, err
	}
	begin, ok, err := l.Store.Unfinished(st)
	if err != nil || !ok {
		return Outcome{}, false, err
	}
	eng, ws, err := l.engine(st, opts)
	if err != nil {
		return Outcome{}, false, err
	}
	defer ws.Close()
	out, err := eng.Resume(ctx, st)
	if err != nil {
		return Outcome{State: st, Engine: out}, true, err
	}
	res, err := l.finish(st, out, filepath.Join(l.Paths.Inbox, begin.ReplyFile), begin.ReplyHash)
	return res, true, err
}

// cleanTemps removes the temporary files a crash left while writing the
// session's own outboxes and state; other sessions' are left alone, as they
// may be being written right now.
func (l *Loop) cleanTemps(id string) error {
	if err := atomicfile.CleanTempsFor(l.Paths.Outbox, id+"_"); err != nil {
		return err
	}
	return atomicfile.CleanTempsFor(l.Paths.Sessions, id+".")
}

// finish commits a turn: the next outbox first, then the session state (the
// commit point), then the reply is moved out of the inbox. A crash before
// the state is saved repeats the outbox write; after it, the reply is
// recognised as applied.
func (l *Loop) finish(st *session.State, out engine.Outcome, replyPath, hash string) (Outcome, error) {
	res := Outcome{State: st, Engine: out}
	if out.Waiting != nil {
		st.UpdatedAt = time.Now().UTC()
		if err := l.Store.Save(st); err != nil {
			return res, err
		}
		return res, nil
	}
	next := *st
	next.Pending = nil
	next.LastResults = out.Results
	if next.LastResults == nil {
		next.LastResults = []command.Result{}
	}
	next.ReadFileRequests = readRequests(out)
	next.Notices = nil
	if len(out.Commands) == 0 {
		next.Notices = []string{protocol.NoCommandsNotice}
	}
	next.Replies = append(append([]session.ReplyRecord{}, st.Replies...), session.ReplyRecord{
		Hash: hash, Sequence: st.SequenceNumber, File: filepath.Base(replyPath), AppliedAt: time.Now().UTC()})
	next.UpdatedAt = time.Now().UTC()
	if out.Done {
		next.IsComplete = true
		next.Summary = out.Summary
	} else {
		next.SequenceNumber++
		p, err := l.WriteOutbox(&next)
		if err != nil {
			return res, err
		}
		res.Outbox = p
	}
	if err := l.Store.Save(&next); err != nil {
		return res, err
	}
	*st = next
	res.State = st
	if filepath.Dir(replyPath) == filepath.Clean(l.Paths.Inbox) && sameReply(replyPath, hash) {
		moved, err := l.moveAside(replyPath, "processed")
		if err != nil {
			return res, err
		}
		res.MovedTo = moved
	}
	return res, nil
}

// sameReply reports whether the file at p still holds the reply with the
// given hash, so recovery never moves an unrelated file of the same name.
func sameReply(p, hash string) bool {
	raw, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	text, err := protocol.Decode(raw)
	return err == nil && session.Hash([]byte(text)) == hash
}

func readRequests(out engine.Outcome) []session.ReadRequest {
	reqs := []session.ReadRequest{}
	for i, c := range out.Commands {
		if c.Type == command.ReadFile && i < len(out.Results) && out.Results[i].Success() {
			reqs = append(reqs, session.ReadRequest{Path: c.Path, StartLine: c.StartLine, EndLine: c.EndLine})
		}
	}
	return reqs
}

// moveAside moves a reply from the inbox into inbox/<sub>/, never replacing
// a file already there. A reply outside the inbox is left where it is.
func (l *Loop) moveAside(p, sub string) (string, error) {
	if filepath.Dir(p) != filepath.Clean(l.Paths.Inbox) {
		return "", nil
	}
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	dir := filepath.Join(l.Paths.Inbox, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("move reply: %w", err)
	}
	base := filepath.Base(p)
	dst := filepath.Join(dir, base)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	for n := 2; ; n++ {
		if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
			break
		}
		dst = filepath.Join(dir, fmt.Sprintf("%s.%d%s", stem, n, ext))
	}
	if err := os.Rename(p, dst); err != nil {
		return "", fmt.Errorf("move reply: %w", err)
	}
	return dst, nil
}

// Reject moves a reply that cannot be applied (too large, not text) out of
// the inbox so that it is not tried again, and returns where it went.
func (l *Loop) Reject(p string) (string, error) { return l.moveAside(p, "rejected") }

// Unfinished reports whether the session's current request has a reply
// that was begun but not finished, and which file it came from.
func (l *Loop) Unfinished(st *session.State) (string, bool) {
	begin, ok, err := l.Store.Unfinished(st)
	return begin.ReplyFile, ok && err == nil
}

// Decide records the person's answer to the question the session waits
// for; the caller then resumes the turn with Recover.
func (l *Loop) Decide(st *session.State, approved, all bool, reason string) (*session.Pending, error) {
	p := st.Pending
	if p == nil {
		return nil, hint.Wrap(fmt.Errorf("session %s is not waiting for an approval", st.SessionID),
			"'courier status' shows what a session waits for")
	}
	t, err := l.Store.OpenTurn(st.SessionID, p.Sequence)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	rec := session.Record{Kind: session.Decision, Index: p.Index, Approved: approved, All: all && approved, Reason: reason}
	if err := t.Append(rec); err != nil {
		return nil, err
	}
	return p, nil
}
