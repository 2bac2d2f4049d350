package session_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/session"
)

// sampleRecords is one turn's journal with every kind of record.
func sampleRecords() []session.Record {
	exit := 0
	at := func(s int) time.Time { return day.Add(time.Duration(s) * time.Second) }
	return []session.Record{
		{Kind: session.RecordBegin, At: at(0), ReplyHash: session.Hash([]byte("reply")), ReplyFile: "inbox/r1.txt", Commands: []command.Command{
			{Type: command.CreateFile, Path: "a.go", Content: "package a\n"},
			{Type: command.RunCommand, Command: "go test ./..."},
		}},
		{Kind: session.RecordChange, Index: 0, At: at(1), Change: &session.Change{
			Path: "a.go", After: session.Hash([]byte("package a\n")), CreatedDirs: []string{"x"},
			Done: command.Result{Type: command.CreateFile, Path: "a.go", Status: command.OK, Summary: "created"},
		}},
		{Kind: session.RecordStart, Index: 1, At: at(2)},
		{Kind: session.RecordResult, Index: 1, At: at(3), Result: &command.Result{Type: command.RunCommand, Status: command.OK, Summary: "ok", ExitCode: &exit}},
		{Kind: session.RecordDecision, Index: 1, At: at(4), Approved: true, All: true, Reason: "tests"},
	}
}

func openTurn(t *testing.T, s session.Store, seq int) *session.Turn {
	t.Helper()
	turn, err := s.OpenTurn("0000000a", seq)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { turn.Close() })
	return turn
}

func TestJournalRoundTrip(t *testing.T) {
	s := newStore(t)
	recs := sampleRecords()
	turn := openTurn(t, s, 1)
	if len(turn.Records) != 0 {
		t.Fatalf("new turn has records %+v", turn.Records)
	}
	for _, r := range recs[:3] {
		if err := turn.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	turn.Close()

	reopened := openTurn(t, s, 1)
	if !reflect.DeepEqual(reopened.Records, recs[:3]) {
		t.Fatalf("reopened records\n%+v\nwant\n%+v", reopened.Records, recs[:3])
	}
	for _, r := range recs[3:] {
		if err := reopened.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	read, err := s.ReadTurn("0000000a", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read.Records, recs) || read.Sequence != 1 || read.Dir != session.TurnDir(s, "0000000a", 1) {
		t.Errorf("ReadTurn = %+v", read)
	}
	if b, ok := read.Begun(); !ok || b.ReplyFile != "inbox/r1.txt" {
		t.Errorf("Begun = %+v, %v", b, ok)
	}
	if ch := read.Changes(); len(ch) != 1 || ch[0].Change.Path != "a.go" {
		t.Errorf("Changes = %+v", ch)
	}
	if read.IsUndone() {
		t.Error("turn reads as undone")
	}
}

func TestAppendFillsTime(t *testing.T) {
	s := newStore(t)
	turn := openTurn(t, s, 1)
	before := time.Now()
	if err := turn.Append(session.Record{Kind: session.RecordUndone}); err != nil {
		t.Fatal(err)
	}
	read, _ := s.ReadTurn("0000000a", 1)
	if len(read.Records) != 1 || read.Records[0].At.Before(before.Add(-time.Second)) || !read.IsUndone() {
		t.Errorf("records %+v", read.Records)
	}
}

// tornTail is what a crash can leave after the last whole record.
func TestTornLastLineIsCutOff(t *testing.T) {
	recs := sampleRecords()
	whole, err := json.Marshal(recs[2])
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tail string
	}{
		{name: "half a line", tail: string(whole[:len(whole)/2])},
		{name: "one byte", tail: "{"},
		{name: "garbage", tail: "\x00\x00\x00"},
		{name: "line without its newline", tail: string(whole)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			turn := openTurn(t, s, 1)
			for _, r := range recs[:2] {
				if err := turn.Append(r); err != nil {
					t.Fatal(err)
				}
			}
			turn.Close()
			p := filepath.Join(session.TurnDir(s, "0000000a", 1), "journal.jsonl")
			good := readBytes(t, p)
			appendBytes(t, p, tc.tail)

			reopened := openTurn(t, s, 1)
			n := len(reopened.Records)
			if n < 2 || !reflect.DeepEqual(reopened.Records[:2], recs[:2]) {
				t.Fatalf("reopened records %+v", reopened.Records)
			}
			next := recs[3]
			if err := reopened.Append(next); err != nil {
				t.Fatal(err)
			}
			reopened.Close()

			data := readBytes(t, p)
			if !bytes.HasPrefix(data, good) {
				t.Errorf("whole records changed")
			}
			checkJournalLines(t, data)
			read, err := s.ReadTurn("0000000a", 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(read.Records) != n+1 || !reflect.DeepEqual(read.Records[n], next) {
				t.Errorf("after repair and append ReadTurn has %d records, want %d ending in the appended one:\n%+v", len(read.Records), n+1, read.Records)
			}
			again := openTurn(t, s, 1)
			if !reflect.DeepEqual(again.Records, read.Records) {
				t.Errorf("reopening again gives %+v", again.Records)
			}
		})
	}
}

// checkJournalLines fails unless every line of a journal is a whole JSON
// record ending in a newline.
func checkJournalLines(t *testing.T, data []byte) {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("journal does not end in a newline")
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var r session.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Errorf("journal line %d %q: %v", i+1, line, err)
		}
	}
}

func appendBytes(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// A damaged line in the middle is not a crash's torn write: courier says so
// rather than drop the records after it.
func TestDamagedJournalIsAnError(t *testing.T) {
	s := newStore(t)
	turn := openTurn(t, s, 1)
	for _, r := range sampleRecords()[:2] {
		if err := turn.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	turn.Close()
	p := filepath.Join(session.TurnDir(s, "0000000a", 1), "journal.jsonl")
	data := readBytes(t, p)
	damaged := append([]byte("{not json}\n"), data...)
	if err := os.WriteFile(p, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() error{
		"OpenTurn": func() error { _, err := s.OpenTurn("0000000a", 1); return err },
		"ReadTurn": func() error { _, err := s.ReadTurn("0000000a", 1); return err },
	} {
		err := open()
		if err == nil || !strings.Contains(err.Error(), "damaged at line 1") {
			t.Errorf("%s of a damaged journal: %v", name, err)
		}
	}
	if got := readBytes(t, p); !bytes.Equal(got, damaged) {
		t.Error("the damaged journal was changed")
	}
}

func TestReadTurnMissing(t *testing.T) {
	if _, err := newStore(t).ReadTurn("0000000a", 7); err == nil {
		t.Error("ReadTurn of a missing turn succeeded")
	}
}

func TestOpenTurnRemovesCrashTemps(t *testing.T) {
	s := newStore(t)
	openTurn(t, s, 1).Close()
	dir := session.TurnDir(s, "0000000a", 1)
	// blobs/ is where earlier courier versions kept contents; kept/ is
	// where undo keeps changed files.
	for _, d := range []string{filepath.Join(dir, "blobs"), filepath.Join(dir, "kept", "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(dir, ".courier-tmp-reply.txt-1"), filepath.Join(dir, "blobs", ".courier-tmp-abc-2"), filepath.Join(dir, "kept", ".courier-tmp-a.go-3"), filepath.Join(dir, "kept", "src", ".courier-tmp-b.go-4")} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	openTurn(t, s, 1)
	for _, d := range []string{dir, filepath.Join(dir, "blobs"), filepath.Join(dir, "kept"), filepath.Join(dir, "kept", "src")} {
		if left := tempNames(t, d); len(left) > 0 {
			t.Errorf("temporary files left in %s: %q", d, left)
		}
	}
}

func TestBlobs(t *testing.T) {
	s := newStore(t)
	turn := openTurn(t, s, 1)
	const helloHash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	tests := []struct {
		data string
		hash string
	}{
		{data: "hello", hash: helloHash},
		{data: "hello", hash: helloHash},
		{data: "", hash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{data: "hello\n", hash: session.Hash([]byte("hello\n"))},
	}
	for _, tc := range tests {
		h, err := turn.SaveBlob([]byte(tc.data))
		if err != nil || h != tc.hash {
			t.Errorf("SaveBlob(%q) = %s, %v; want %s", tc.data, h, err, tc.hash)
		}
		got, err := turn.Blob(h)
		if err != nil || string(got) != tc.data {
			t.Errorf("Blob(%s) = %q, %v; want %q", h, got, err, tc.data)
		}
	}
	// Each content once: three entries of a header line, the content and
	// a newline.
	want := 0
	for _, d := range []string{"hello", "", "hello\n"} {
		want += len(fmt.Sprintf("blob %s %d\n", session.Hash([]byte(d)), len(d))) + len(d) + 1
	}
	if got := turn.Stored(); got != int64(want) {
		t.Errorf("the turn keeps %d bytes, want %d (each content once)", got, want)
	}
	if _, err := turn.Blob("0000"); err == nil {
		t.Error("Blob of an unknown hash succeeded")
	}
}

func TestTurnsOrder(t *testing.T) {
	s := newStore(t)
	if seqs, err := s.Turns("0000000a"); err != nil || seqs != nil {
		t.Errorf("Turns of a session without turns = %v, %v", seqs, err)
	}
	for _, seq := range []int{10, 2, 1, 9} {
		openTurn(t, s, seq).Close()
	}
	turns := filepath.Join(s.Folder("0000000a"), "turns")
	if err := os.WriteFile(filepath.Join(turns, "0003"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(turns, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	seqs, err := s.Turns("0000000a")
	if want := []int{1, 2, 9, 10}; err != nil || !reflect.DeepEqual(seqs, want) {
		t.Errorf("Turns = %v, %v; want %v", seqs, err, want)
	}
	if got, want := session.TurnDir(s, "0000000a", 9), filepath.Join(turns, "0009"); got != want {
		t.Errorf("TurnDir = %s, want %s", got, want)
	}
}

// Record kinds keep the names journals have always had on disk ("apply"
// for a file change): a journal an earlier courier wrote reads as today's,
// and today's is written as it was.
func TestJournalKindsOnDisk(t *testing.T) {
	s := newStore(t)
	dir := filepath.Join(s.Folder("0000000a"), "turns", "0001")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := `{"kind":"begin","index":0,"at":"2026-01-01T00:00:00Z","replyHash":"ab","replyFile":"r.txt"}
{"kind":"apply","index":0,"at":"2026-01-01T00:00:01Z","change":{"path":"a.go","after":"cd","done":{"type":"CREATE_FILE","status":"ok","summary":"created"}}}
{"kind":"start","index":1,"at":"2026-01-01T00:00:02Z"}
{"kind":"result","index":1,"at":"2026-01-01T00:00:03Z","result":{"type":"RUN_COMMAND","status":"ok","summary":"ok"}}
{"kind":"decision","index":2,"at":"2026-01-01T00:00:04Z","approved":true}
{"kind":"undone","index":0,"at":"2026-01-01T00:00:05Z"}
`
	if err := os.WriteFile(filepath.Join(dir, "journal.jsonl"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := s.ReadTurn("0000000a", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []session.RecordKind{session.RecordBegin, session.RecordChange, session.RecordStart, session.RecordResult, session.RecordDecision, session.RecordUndone}
	var got []session.RecordKind
	for _, r := range read.Records {
		got = append(got, r.Kind)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("kinds read = %v, want %v", got, want)
	}
	if ch := read.Changes(); len(ch) != 1 || ch[0].Change.Path != "a.go" {
		t.Errorf("Changes = %+v", ch)
	}

	turn := openTurn(t, s, 2)
	if err := turn.Append(session.Record{Kind: session.RecordChange, Change: &session.Change{Path: "b.go"}}); err != nil {
		t.Fatal(err)
	}
	turn.Close()
	data, err := os.ReadFile(filepath.Join(s.Folder("0000000a"), "turns", "0002", "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(`{"kind":"apply",`)) {
		t.Errorf("a change is written as %.40s", data)
	}
}
