package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

// sampleRecords is one turn's record with every kind of record.
func sampleRecords() []Record {
	exit := 0
	at := func(s int) time.Time { return day.Add(time.Duration(s) * time.Second) }
	after := &Entry{Path: "x/a\xff.go", Kind: File, Mode: 0o644, Size: 10, Hash: Hash("package a\n"), Flags: Stored}
	return []Record{
		{Kind: RecordBegin, At: at(0), ReplyHash: Hash("reply"), ReplyFile: "inbox/r1.txt", Commands: []command.Command{
			{Type: command.CreateFile, Path: "a.go", Content: "package a\n"},
			{Type: command.RunCommand, Command: "go test ./..."},
		}},
		{Kind: RecordApply, Index: 0, At: at(1), Path: "a.go", To: Hash("package a\n"), Range: &[2]int{2, 3},
			Result: &command.Result{Type: command.CreateFile, Path: "a.go", Status: command.OK, Summary: "created"}},
		{Kind: RecordChanged, Index: 0, At: at(2), Changes: []Change{{Path: after.Path, After: after}}, Skipped: []Skipped{{Path: "big\xfe", Reason: "too big"}}},
		{Kind: RecordStart, Index: 1, At: at(3)},
		{Kind: RecordResult, Index: 1, At: at(4), Result: &command.Result{Type: command.RunCommand, Status: command.OK, Summary: "ok", ExitCode: &exit}},
		{Kind: RecordDecision, Index: 1, At: at(5), Approved: true, All: true, Reason: "tests"},
	}
}

func openTurn(t *testing.T, s Store, seq int) *Turn {
	t.Helper()
	turn, err := s.OpenTurn("0000000a", seq)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { turn.Close() })
	return turn
}

// TestRecordRoundTrip: records read back as written, file names that are
// not UTF-8 included.
func TestRecordRoundTrip(t *testing.T) {
	s := newStore(t)
	recs := sampleRecords()
	turn := openTurn(t, s, 1)
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
	if !reflect.DeepEqual(read.Records, recs) || read.Sequence != 1 {
		t.Errorf("ReadTurn = %+v", read)
	}
	if b, ok := read.Begun(); !ok || b.ReplyFile != "inbox/r1.txt" || read.Has(RecordUndone) {
		t.Errorf("Begun = %+v, %v", b, ok)
	}
}

// TestTornLastLineIsCutOff: what a crash can leave after the last whole
// record is cut off when the turn is opened, and the next record follows
// the whole ones.
func TestTornLastLineIsCutOff(t *testing.T) {
	recs := sampleRecords()
	whole, err := json.Marshal(recs[2])
	if err != nil {
		t.Fatal(err)
	}
	for name, tail := range map[string]string{"half a line": string(whole[:len(whole)/2]), "one byte": "{", "garbage": "\x00\x00\x00", "line without its newline": string(whole)} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			turn := openTurn(t, s, 1)
			for _, r := range recs[:2] {
				if err := turn.Append(r); err != nil {
					t.Fatal(err)
				}
			}
			turn.Close()
			p := s.turnPath("0000000a", 1)
			good := readBytes(t, p)
			appendBytes(t, p, tail)
			reopened := openTurn(t, s, 1)
			if !reflect.DeepEqual(reopened.Records, recs[:2]) {
				t.Fatalf("reopened records %+v", reopened.Records)
			}
			if err := reopened.Append(recs[3]); err != nil {
				t.Fatal(err)
			}
			reopened.Close()
			if data := readBytes(t, p); !bytes.HasPrefix(data, good) || bytes.Count(data, []byte("\n")) != 3 {
				t.Errorf("record after repair and append:\n%s", data)
			}
			if read, err := s.ReadTurn("0000000a", 1); err != nil || !reflect.DeepEqual(read.Records, []Record{recs[0], recs[1], recs[3]}) {
				t.Errorf("ReadTurn = %+v, %v", read, err)
			}
		})
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

// TestDamagedRecordIsAnError: a damaged line before the end is not a
// crash's torn write: courier says so rather than drop the records after
// it, and leaves the file as it is.
func TestDamagedRecordIsAnError(t *testing.T) {
	s := newStore(t)
	turn := openTurn(t, s, 1)
	for _, r := range sampleRecords()[:2] {
		if err := turn.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	turn.Close()
	p := s.turnPath("0000000a", 1)
	damaged := append([]byte("{not json}\n"), readBytes(t, p)...)
	if err := os.WriteFile(p, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() error{
		"OpenTurn": func() error { _, err := s.OpenTurn("0000000a", 1); return err },
		"ReadTurn": func() error { _, err := s.ReadTurn("0000000a", 1); return err },
	} {
		if err := open(); err == nil || !strings.Contains(err.Error(), "damaged at line 1") {
			t.Errorf("%s of a damaged record: %v", name, err)
		}
	}
	if !bytes.Equal(readBytes(t, p), damaged) {
		t.Error("the damaged record was changed")
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
	writeTree(t, s.Folder("0000000a"), map[string]string{"turns/notes.txt": "", "turns/0003.jsonl.bak": ""})
	if seqs, err := s.Turns("0000000a"); err != nil || !reflect.DeepEqual(seqs, []int{1, 2, 9, 10}) {
		t.Errorf("Turns = %v, %v", seqs, err)
	}
}

// TestFindReplyAfterManyTurns: a reply applied in any earlier turn is
// recognised, however long ago, from the start of its turn's record.
func TestFindReplyAfterManyTurns(t *testing.T) {
	s := newStore(t)
	st := newState("0000000a", 0, false)
	hash := func(seq int) string { return Hash(fmt.Sprintf("reply %d", seq)) }
	for seq := 1; seq <= 120; seq++ {
		turn := openTurn(t, s, seq)
		cmds := []command.Command{{Type: command.CreateFile, Path: "big.txt", Content: strings.Repeat("x", 100000)}}
		if err := turn.Append(Record{Kind: RecordBegin, ReplyHash: hash(seq), ReplyFile: "r.txt", Commands: cmds, At: day.Add(time.Duration(seq) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		turn.Close()
	}
	for _, seq := range []int{1, 2, 60, 120} {
		if got, at, err := s.FindReply(st, hash(seq)); got != seq || !at.Equal(day.Add(time.Duration(seq)*time.Minute)) || err != nil {
			t.Errorf("FindReply(reply %d) = %d, %s, %v", seq, got, at, err)
		}
	}
	if got, _, err := s.FindReply(st, hash(121)); got != 0 || err != nil {
		t.Errorf("FindReply of a reply never applied = %d, %v", got, err)
	}
}

// TestFindReplyIgnoresTornBegin: a reply whose begin record a full disk
// or a crash cut short was never applied, and is not taken for one.
func TestFindReplyIgnoresTornBegin(t *testing.T) {
	s := newStore(t)
	st := newState("0000000a", 0, false)
	line, err := json.Marshal(Record{Kind: RecordBegin, ReplyHash: Hash("reply"), Commands: []command.Command{{Type: command.CreateFile, Path: "a", Content: strings.Repeat("x", 5000)}}})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, s.Folder("0000000a"), map[string]string{"turns/0001.jsonl": string(line[:len(line)/2])})
	if seq, _, err := s.FindReply(st, Hash("reply")); seq != 0 || err != nil {
		t.Errorf("FindReply of a torn begin record = %d, %v", seq, err)
	}
}

// TestLargeBodiesKeptApart: a reply's large file content is not copied
// into the turn's record but kept in the content store, and a later
// process (resuming the turn, or showing it) reads it back whole, also
// after a collection.
func TestLargeBodiesKeptApart(t *testing.T) {
	f := newFixture(t, Options{})
	big := strings.Repeat("MARKER a line of the large file\n", 4<<10)
	cmds := []command.Command{
		{Type: command.CreateFile, Path: "big.txt", Content: big},
		{Type: command.CreateFile, Path: "small.txt", Content: "small\n"},
	}
	turn, err := f.h.Turn(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := turn.Append(Record{Kind: RecordBegin, ReplyHash: "r", Commands: cmds}); err != nil {
		t.Fatal(err)
	}
	if got, _ := turn.Begun(); got.Commands[0].Content != big {
		t.Error("the turn that wrote the record lost the body in memory")
	}
	turn.Close()
	data, err := os.ReadFile(f.store.turnPath(f.id, 1))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("MARKER")) || len(data) > 4<<10 {
		t.Errorf("the record holds the large body (%d bytes)", len(data))
	}
	for _, gc := range []bool{false, true} {
		if gc {
			if _, err := f.h.GC(1 << 30); err != nil {
				t.Fatal(err)
			}
		}
		read, err := f.store.ReadTurn(f.id, 1)
		if err != nil {
			t.Fatal(err)
		}
		begin, _ := read.Begun()
		got, err := begin.AllCommands()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, cmds) {
			t.Errorf("after gc %v: the commands read back differ from those written", gc)
		}
	}
}

// TestRecordNeverNamesUnlistedContent: what a crash leaves of a turn's
// record never names content the store did not list yet. A record is
// written only by Sync, after the contents it names.
func TestRecordNeverNamesUnlistedContent(t *testing.T) {
	f := newFixture(t, Options{})
	turn := f.turn(1)
	h, err := turn.Keep("content only this record names\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := turn.Add(Record{Kind: RecordApply, Index: 0, Path: "a.txt", From: h}); err != nil {
		t.Fatal(err)
	}
	// Killed here: another process reads what is on disk.
	read, err := f.store.ReadTurn(f.id, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range hashes(read.Records) {
		if _, err := (&objects{dir: f.h.obj.dir}).read(x); x != "" && err != nil {
			t.Errorf("the record on disk names content the store lost: %v", err)
		}
	}
	if err := turn.Sync(); err != nil {
		t.Fatal(err)
	}
	if read, _ := f.store.ReadTurn(f.id, 1); !read.Has(RecordApply) {
		t.Error("Sync did not write the record")
	}
}
