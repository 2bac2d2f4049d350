package session_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/session"
)

// TestPackTornTail: a crash can tear the last kept content (the pack is
// only appended to); reopening the turn cuts it off and keeps the whole
// ones, and later contents go after them.
func TestPackTornTail(t *testing.T) {
	first := []byte("first content\n")
	second := bytes.Repeat([]byte("second "), 100)
	for _, tc := range []struct {
		name string
		cut  int // bytes of the second entry that reached the disk
	}{
		{"header half written", 10},
		{"content half written", 120},
		{"final newline missing", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			turn := openTurn(t, s, 1)
			h1, err := turn.SaveBlob(first)
			if err != nil {
				t.Fatal(err)
			}
			whole := turn.Stored()
			h2, err := turn.SaveBlob(second)
			if err != nil {
				t.Fatal(err)
			}
			if err := turn.Sync(); err != nil {
				t.Fatal(err)
			}
			turn.Close()
			p := filepath.Join(turn.Dir, "blobs.pack")
			cut := whole + int64(tc.cut)
			if tc.cut < 0 {
				cut = turn.Stored() - 1
			}
			if err := os.Truncate(p, cut); err != nil {
				t.Fatal(err)
			}

			again := openTurn(t, s, 1)
			if got, err := again.Blob(h1); err != nil || !bytes.Equal(got, first) {
				t.Errorf("whole content = %q, %v", got, err)
			}
			if again.HasBlob(h2) {
				t.Error("the torn content reads as kept")
			}
			if info, _ := os.Stat(p); info.Size() != whole {
				t.Errorf("pack is %d bytes after repair, want %d", info.Size(), whole)
			}
			if _, err := again.SaveBlob(second); err != nil {
				t.Fatal(err)
			}
			again.Close()
			read, err := s.ReadTurn("0000000a", 1)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := read.Blob(h2); err != nil || !bytes.Equal(got, second) {
				t.Errorf("content kept after the repair = %q, %v", got, err)
			}
		})
	}
}

// TestPackDamageDetected: kept content that no longer matches its hash is
// an error, never restored as if it were right.
func TestPackDamageDetected(t *testing.T) {
	s := newStore(t)
	turn := openTurn(t, s, 1)
	h, err := turn.SaveBlob([]byte("the original\n"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Close()
	p := filepath.Join(turn.Dir, "blobs.pack")
	data := readBytes(t, p)
	if err := os.WriteFile(p, bytes.Replace(data, []byte("original"), []byte("0riginal"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := s.ReadTurn("0000000a", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := read.Blob(h); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("Blob of damaged content = %v", err)
	}
}

// TestLegacyBlobs: turns written by earlier courier versions kept one file
// per content in blobs/; they are still read.
func TestLegacyBlobs(t *testing.T) {
	s := newStore(t)
	openTurn(t, s, 1).Close()
	content := []byte("kept the old way\n")
	h := session.Hash(content)
	dir := filepath.Join(session.TurnDir(s, "0000000a", 1), "blobs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, h), content, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, turn := range map[string]func() *session.Turn{
		"open": func() *session.Turn { return openTurn(t, s, 1) },
		"read": func() *session.Turn {
			r, err := s.ReadTurn("0000000a", 1)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
	} {
		tn := turn()
		if !tn.HasBlob(h) {
			t.Errorf("%s: old content not found", name)
		}
		if got, err := tn.Blob(h); err != nil || !bytes.Equal(got, content) {
			t.Errorf("%s: Blob = %q, %v", name, got, err)
		}
	}
}

// TestAddThenSync: records added without a sync are written (a killed
// courier keeps them) and read back; Sync makes them durable.
func TestAddThenSync(t *testing.T) {
	s := newStore(t)
	turn := openTurn(t, s, 1)
	recs := sampleRecords()
	for _, r := range recs[:3] {
		if err := turn.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	read, err := s.ReadTurn("0000000a", 1)
	if err != nil || len(read.Records) != 3 {
		t.Fatalf("records written before Sync: %d, %v", len(read.Records), err)
	}
	if err := turn.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := turn.Sync(); err != nil {
		t.Errorf("Sync with nothing new = %v", err)
	}
	// A result written as the apply record's planned one reads back so.
	res := session.Record{Kind: session.RecordResult, Index: 0, AsPlanned: true}
	if err := turn.Append(res); err != nil {
		t.Fatal(err)
	}
	again := openTurn(t, s, 1)
	last := again.Records[len(again.Records)-1]
	if last.Kind != session.RecordResult || !last.AsPlanned || last.Result != nil {
		t.Errorf("last record %+v", last)
	}
}
