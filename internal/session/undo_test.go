package session_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/courier-agent/courier/internal/session"
)

// writeTurn records a finished turn: its begin record (naming the turn
// undo reverts after it, when prev is not nil), a file change if changed,
// and an undone record if undone.
func writeTurn(t *testing.T, s session.Store, seq int, prev *int, changed, undone bool) {
	t.Helper()
	turn, err := s.OpenTurn("0000000a", seq)
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Close()
	recs := []session.Record{{Kind: session.RecordBegin, ReplyHash: replyHash(seq), UndoPrev: prev}}
	if changed {
		recs = append(recs, session.Record{Kind: session.RecordChange, Change: &session.Change{Path: "f.txt"}})
	}
	if undone {
		recs = append(recs, session.Record{Kind: session.RecordUndone})
	}
	for _, r := range recs {
		if err := turn.Append(r); err != nil {
			t.Fatal(err)
		}
	}
}

func intp(n int) *int { return &n }

// TestUndoChain: a session keeps the turn undo reverts next, and each
// turn's begin record the one after it; a session written before that
// (format 0, begin records without it) has them found by reading the
// turns, newest first, skipping turns without changes and turns undone.
func TestUndoChain(t *testing.T) {
	t.Run("kept", func(t *testing.T) {
		s := newStore(t)
		st := newState("0000000a", 0, false)
		st.Format, st.UndoTop, st.SequenceNumber = session.CurrentFormat, 5, 7
		writeTurn(t, s, 5, intp(2), true, false)
		if top, err := s.UndoTop(st); err != nil || top != 5 {
			t.Errorf("UndoTop = %d, %v; want 5", top, err)
		}
		turn, err := s.ReadTurn("0000000a", 5)
		if err != nil {
			t.Fatal(err)
		}
		if below, err := s.UndoBelow("0000000a", turn); err != nil || below != 2 {
			t.Errorf("UndoBelow = %d, %v; want 2", below, err)
		}
	})
	t.Run("found in an older session", func(t *testing.T) {
		s := newStore(t)
		writeTurn(t, s, 1, nil, true, false)
		writeTurn(t, s, 2, nil, true, true)
		writeTurn(t, s, 3, nil, false, false)
		writeTurn(t, s, 4, nil, true, false)
		writeTurn(t, s, 5, nil, true, false) // the unfinished current turn
		st := newState("0000000a", 0, false)
		st.SequenceNumber = 5
		top, err := s.UndoTop(st)
		if err != nil || top != 4 || st.UndoTop != 4 || st.Format != session.CurrentFormat {
			t.Fatalf("UndoTop = %d, %v (state %d, format %d); want 4", top, err, st.UndoTop, st.Format)
		}
		turn, err := s.ReadTurn("0000000a", 4)
		if err != nil {
			t.Fatal(err)
		}
		if below, err := s.UndoBelow("0000000a", turn); err != nil || below != 1 {
			t.Errorf("UndoBelow(4) = %d, %v; want 1 (2 undone, 3 without changes)", below, err)
		}
	})
}

// TestKeep: undo keeps the content of a file changed since the turn at the
// file's own path under the turn's kept/ folder, and never outside it.
func TestKeep(t *testing.T) {
	s := newStore(t)
	turn := openTurn(t, s, 3)
	p, err := turn.Keep("src/deep/main.go", []byte("later work\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(turn.Dir, "kept", "src", "deep", "main.go"); p != want {
		t.Errorf("kept at %s, want %s", p, want)
	}
	if got := readBytes(t, p); string(got) != "later work\n" {
		t.Errorf("kept %q", got)
	}
	kept, err := turn.Kept()
	if err != nil || !reflect.DeepEqual(kept, map[string]string{"src/deep/main.go": p}) {
		t.Errorf("Kept = %v, %v", kept, err)
	}
	for _, bad := range []string{"../escape.txt", "/etc/passwd", "a/../../b"} {
		if _, err := turn.Keep(bad, []byte("x")); err == nil {
			t.Errorf("Keep(%q) succeeded", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(turn.Dir, "escape.txt")); err == nil {
		t.Error("a file was written outside kept/")
	}
	none, err := openTurn(t, s, 4).Kept()
	if err != nil || len(none) != 0 {
		t.Errorf("Kept of a turn without kept files = %v, %v", none, err)
	}
}
