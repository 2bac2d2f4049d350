package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// repliesName is the session's index of applied replies, one ReplyRecord
// a line, in the order they were applied. It only ever grows by appending,
// and it is not synced: it is an index of the turns' begin records, caught
// up from them when it lags behind the state (a power cut lost its tail)
// and rebuilt from them when it is damaged.
const repliesName = "replies.jsonl"

// tailSize is how much of the end of the index NoteReply reads to find the
// last reply noted: more than one line can take.
const tailSize = 8 << 10

func (s Store) repliesPath(id string) string { return filepath.Join(s.Folder(id), repliesName) }

// committedThrough is the newest sequence number whose turn, if it has
// one, is committed: the current request's turn is not, unless it was the
// one that completed the session.
func committedThrough(st *State) int {
	if st.IsComplete {
		return st.SequenceNumber
	}
	return st.SequenceNumber - 1
}

// FindReply returns the applied reply with the given hash, from any earlier
// turn of the session, however long ago.
func (s Store) FindReply(st *State, hash string) (ReplyRecord, bool, error) {
	for _, r := range st.Replies {
		if r.Hash == hash {
			return r, true, nil
		}
	}
	data, err := s.caughtUp(st)
	if err != nil {
		return ReplyRecord{}, false, err
	}
	i := bytes.Index(data, []byte(`"hash":"`+hash+`"`))
	if i < 0 {
		return ReplyRecord{}, false, nil
	}
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	end := i + bytes.IndexByte(data[i:], '\n')
	var r ReplyRecord
	if err := json.Unmarshal(data[start:end], &r); err != nil {
		return ReplyRecord{}, false, fmt.Errorf("reply index of %s: %w", st.SessionID, err)
	}
	return r, true, nil
}

// NoteReply adds the reply a turn applied to the session's index, before
// the turn is committed. Noting it again (when a crash came between this
// and the commit) changes nothing.
func (s Store) NoteReply(st *State, r ReplyRecord) error {
	last, err := s.lastNoted(st)
	if err != nil {
		return err
	}
	if last >= r.Sequence {
		return nil
	}
	recs, err := s.repliesFromTurns(st.SessionID, last+1, r.Sequence-1)
	if err != nil {
		return err
	}
	return s.appendReplies(st.SessionID, append(recs, r))
}

// caughtUp returns the whole index, first adding the committed turns it
// lags behind, or rebuilding it if it is missing or damaged.
func (s Store) caughtUp(st *State) ([]byte, error) {
	data, err := os.ReadFile(s.repliesPath(st.SessionID))
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return nil, fmt.Errorf("reply index of %s: %w", st.SessionID, err)
	}
	whole := data[:bytes.LastIndexByte(data, '\n')+1]
	last, ok := lastLine(whole)
	if missing || !ok || bytes.IndexByte(whole, 0) >= 0 {
		return s.rebuildReplies(st)
	}
	recs, err := s.repliesFromTurns(st.SessionID, last+1, committedThrough(st))
	if err != nil || len(recs) == 0 {
		return whole, err
	}
	if len(whole) < len(data) {
		// A torn last line: rewrite rather than append after it.
		return s.rebuildReplies(st)
	}
	if err := s.appendReplies(st.SessionID, recs); err != nil {
		return nil, err
	}
	for _, r := range recs {
		line, _ := json.Marshal(r)
		whole = append(append(whole, line...), '\n')
	}
	return whole, nil
}

// lastNoted returns the sequence of the last reply in the index, reading
// only its end; a missing, torn or damaged index is rebuilt first.
func (s Store) lastNoted(st *State) (int, error) {
	f, err := os.Open(s.repliesPath(st.SessionID))
	if err == nil {
		defer f.Close()
		var info fs.FileInfo
		if info, err = f.Stat(); err == nil {
			off := max(0, info.Size()-tailSize)
			tail := make([]byte, info.Size()-off)
			if _, err = f.ReadAt(tail, off); err == nil || errors.Is(err, io.EOF) {
				last, ok := lastLine(tail)
				whole := len(tail) == 0 || tail[len(tail)-1] == '\n'
				if ok && whole && bytes.IndexByte(tail, 0) < 0 {
					return last, nil
				}
			}
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("reply index of %s: %w", st.SessionID, err)
	}
	data, err := s.rebuildReplies(st)
	if err != nil {
		return 0, err
	}
	last, _ := lastLine(data)
	return last, nil
}

// lastLine returns the sequence of the last whole line of data (0 for
// none); ok is false when that line does not parse.
func lastLine(data []byte) (int, bool) {
	data = bytes.TrimSuffix(data, []byte("\n"))
	if len(data) == 0 {
		return 0, true
	}
	var r ReplyRecord
	if err := json.Unmarshal(data[bytes.LastIndexByte(data, '\n')+1:], &r); err != nil || r.Sequence < 1 {
		return 0, false
	}
	return r.Sequence, true
}

// rebuildReplies writes the index afresh: the replies listed in a state
// written by an earlier courier version, then those the turns' begin
// records show.
func (s Store) rebuildReplies(st *State) ([]byte, error) {
	last := 0
	var b bytes.Buffer
	for _, r := range st.Replies {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
		last = max(last, r.Sequence)
	}
	recs, err := s.repliesFromTurns(st.SessionID, last+1, committedThrough(st))
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	p := s.repliesPath(st.SessionID)
	if _, err := os.Stat(p); b.Len() == 0 && errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing to index yet
	}
	if err := os.MkdirAll(s.Folder(st.SessionID), 0o755); err != nil {
		return nil, fmt.Errorf("reply index of %s: %w", st.SessionID, err)
	}
	if err := atomicfile.Write(p, b.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("reply index of %s: %w", st.SessionID, err)
	}
	return b.Bytes(), nil
}

// repliesFromTurns reads the replies of the turns from..through from their
// begin records; sequence numbers without a begun turn (an undo's) are
// skipped.
func (s Store) repliesFromTurns(id string, from, through int) ([]ReplyRecord, error) {
	var out []ReplyRecord
	for seq := from; seq <= through; seq++ {
		t, err := s.ReadTurn(id, seq)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if b, ok := t.Begun(); ok {
			out = append(out, ReplyRecord{Hash: b.ReplyHash, Sequence: seq, File: b.ReplyFile, AppliedAt: b.At})
		}
	}
	return out, nil
}

func (s Store) appendReplies(id string, recs []ReplyRecord) error {
	var b bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("reply index of %s: %w", id, err)
		}
		b.Write(append(line, '\n'))
	}
	f, err := os.OpenFile(s.repliesPath(id), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("reply index of %s: %w", id, err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("reply index of %s: %w", id, err)
	}
	return f.Close()
}
