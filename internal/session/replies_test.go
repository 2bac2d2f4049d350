package session_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/session"
)

func replyHash(seq int) string { return session.Hash([]byte(fmt.Sprintf("reply %d", seq))) }

// applyTurns records n turns the way courier does: the begin record, then
// the reply in the index, then the state moves on.
func applyTurns(t *testing.T, s session.Store, st *session.State, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		seq := st.SequenceNumber
		turn, err := s.OpenTurn(st.SessionID, seq)
		if err != nil {
			t.Fatal(err)
		}
		if err := turn.Append(session.Record{Kind: session.RecordBegin, ReplyHash: replyHash(seq), ReplyFile: fmt.Sprintf("r%d.txt", seq), At: day}); err != nil {
			t.Fatal(err)
		}
		turn.Close()
		if err := s.NoteReply(st, session.ReplyRecord{Hash: replyHash(seq), Sequence: seq, File: fmt.Sprintf("r%d.txt", seq), AppliedAt: day}); err != nil {
			t.Fatal(err)
		}
		st.SequenceNumber++
	}
}

func newSessionIn(t *testing.T, s session.Store) *session.State {
	t.Helper()
	st := newState("0000000a", 0, false)
	if err := s.Create(st); err != nil {
		t.Fatal(err)
	}
	return st
}

func checkFound(t *testing.T, s session.Store, st *session.State, seqs ...int) {
	t.Helper()
	for _, seq := range seqs {
		r, ok, err := s.FindReply(st, replyHash(seq))
		if err != nil || !ok || r.Sequence != seq || r.File != fmt.Sprintf("r%d.txt", seq) {
			t.Errorf("FindReply(reply %d) = %+v, %v, %v", seq, r, ok, err)
		}
	}
}

func repliesFile(s session.Store) string { return filepath.Join(s.Folder("0000000a"), "replies.jsonl") }

// TestFindReplyAfterManyTurns: a reply applied in any earlier turn is
// recognised, however long ago, and noting a reply twice (a crash between
// noting it and the commit) changes nothing.
func TestFindReplyAfterManyTurns(t *testing.T) {
	s := newStore(t)
	st := newSessionIn(t, s)
	applyTurns(t, s, st, 120)
	checkFound(t, s, st, 1, 2, 60, 119, 120)
	if _, ok, err := s.FindReply(st, replyHash(121)); ok || err != nil {
		t.Errorf("FindReply of a reply never applied = %v, %v", ok, err)
	}
	before := readBytes(t, repliesFile(s))
	if err := s.NoteReply(st, session.ReplyRecord{Hash: replyHash(120), Sequence: 120}); err != nil {
		t.Fatal(err)
	}
	if got := readBytes(t, repliesFile(s)); !bytes.Equal(got, before) || bytes.Count(got, []byte("\n")) != 120 {
		t.Errorf("index after noting a reply again: %d lines", bytes.Count(got, []byte("\n")))
	}
}

// TestRepliesCaughtUpFromTurns: the index is not synced; when a power cut
// lost its tail, the turns' begin records fill it in.
func TestRepliesCaughtUpFromTurns(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func([]byte) []byte
	}{
		{"last lines lost", func(b []byte) []byte { return b[:bytes.Index(b, []byte(`"sequence":8,`))-10] }},
		{"torn last line", func(b []byte) []byte { return b[:len(b)-20] }},
		{"lost entirely", func([]byte) []byte { return nil }},
		{"zeros in the middle", func(b []byte) []byte {
			b = bytes.Clone(b)
			copy(b[200:], make([]byte, 300))
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			st := newSessionIn(t, s)
			applyTurns(t, s, st, 10)
			if err := os.WriteFile(repliesFile(s), tc.cut(readBytes(t, repliesFile(s))), 0o644); err != nil {
				t.Fatal(err)
			}
			checkFound(t, s, st, 1, 3, 8, 9, 10)
			// Noting the next reply after a loss keeps the index whole.
			applyTurns(t, s, st, 1)
			checkFound(t, s, st, 1, 10, 11)
			if n := strings.Count(string(readBytes(t, repliesFile(s))), "\n"); n != 11 {
				t.Errorf("the index has %d lines, want 11", n)
			}
		})
	}
}

// TestRepliesNotedAfterLoss: NoteReply itself fills in what a lost tail
// dropped, so the index never has a gap.
func TestRepliesNotedAfterLoss(t *testing.T) {
	s := newStore(t)
	st := newSessionIn(t, s)
	applyTurns(t, s, st, 5)
	data := readBytes(t, repliesFile(s))
	if err := os.WriteFile(repliesFile(s), data[:bytes.Index(data, []byte(`"sequence":4,`))-10], 0o644); err != nil {
		t.Fatal(err)
	}
	applyTurns(t, s, st, 1)
	if n := strings.Count(string(readBytes(t, repliesFile(s))), "\n"); n != 6 {
		t.Errorf("the index has %d lines, want 6", n)
	}
	checkFound(t, s, st, 4, 5, 6)
}

// TestLegacyRepliesList: a state written by an earlier courier version
// lists the applied replies itself. They are recognised, and the next save
// moves them into the index: the state no longer grows with the turns.
func TestLegacyRepliesList(t *testing.T) {
	s := newStore(t)
	st := newState("0000000a", 0, false)
	st.SequenceNumber = 4
	for seq := 1; seq <= 3; seq++ {
		st.Replies = append(st.Replies, session.ReplyRecord{Hash: replyHash(seq), Sequence: seq, File: fmt.Sprintf("r%d.txt", seq), AppliedAt: day})
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	legacy := strings.Replace(string(mustJSON(t, st)), `"format":2,`, "", 1)
	if err := os.WriteFile(s.Path("0000000a"), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := s.Load("0000000a")
	if err != nil {
		t.Fatal(err)
	}
	checkFound(t, s, loaded, 1, 2, 3)
	if err := s.Save(loaded); err != nil {
		t.Fatal(err)
	}
	if data := readBytes(t, s.Path("0000000a")); bytes.Contains(data, []byte("replies")) {
		t.Errorf("the saved state still lists the replies:\n%s", data)
	}
	again, err := s.Load("0000000a")
	if err != nil {
		t.Fatal(err)
	}
	checkFound(t, s, again, 1, 2, 3)
}

// TestStateSizeConstant: the state file does not grow with the turns.
func TestStateSizeConstant(t *testing.T) {
	s := newStore(t)
	st := newSessionIn(t, s)
	size := func() int64 {
		if err := s.Save(st); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(s.Path("0000000a"))
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	applyTurns(t, s, st, 9)
	at10 := size()
	applyTurns(t, s, st, 190)
	if at200 := size(); at200 > at10+1 {
		t.Errorf("the state grew from %d bytes at turn 10 to %d at turn 200", at10, at200)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}
