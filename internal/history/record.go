package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
)

// RecordKind names a record of a turn.
type RecordKind string

// The records of a turn, in the order a turn writes them.
const (
	// RecordBegin is written before anything executes: which reply, which
	// commands.
	RecordBegin RecordKind = "begin"
	// RecordApply is a file command's change, written before it is made,
	// with the content hashes that tell recovery whether it happened.
	RecordApply RecordKind = "apply"
	// RecordStart is written just before a command starts running.
	RecordStart RecordKind = "start"
	// RecordResult is written once a command is finished.
	RecordResult RecordKind = "result"
	// RecordDecision records the person's answer to an approval question.
	RecordDecision RecordKind = "decision"
	// RecordChanged says what a command changed in the workspace (Index
	// -1: what changed outside the turn, found before a command).
	RecordChanged RecordKind = "changed"
	// RecordUndone marks a turn that was undone.
	RecordUndone RecordKind = "undone"
	// RecordPruned marks a turn whose earlier contents were dropped to
	// stay within the budget: it can no longer be undone.
	RecordPruned RecordKind = "pruned"
)

// Record is one line of a turn's record.
type Record struct {
	Kind  RecordKind `json:"kind"`
	Index int        `json:"index"`
	At    time.Time  `json:"at"`

	// RecordBegin
	ReplyHash string            `json:"replyHash,omitempty"`
	ReplyFile string            `json:"replyFile,omitempty"`
	Commands  []command.Command `json:"commands,omitempty"`
	// UndoPrev is the turn undo reverts after this one: the session's
	// UndoTop when this turn began.
	UndoPrev int `json:"undoPrev,omitempty"`

	// RecordApply: the file, the hashes of its content before the change
	// ("" when it did not exist) and after ("" when deleted), its mode
	// before, and for a line-range edit the hash of the text its numbers
	// refer to and the range it replaced there, so that later edits of the
	// same reply can still be placed. Result is the result to record once
	// the change is in place.
	Path  string      `json:"path,omitempty"`
	From  string      `json:"from,omitempty"`
	To    string      `json:"to,omitempty"`
	Mode  fs.FileMode `json:"mode,omitempty"`
	Base  string      `json:"base,omitempty"`
	Range *[2]int     `json:"range,omitempty"`

	// RecordResult; a file change's result that is its apply record's
	// Result is written as AsPlanned instead of again in full.
	Result    *command.Result `json:"result,omitempty"`
	AsPlanned bool            `json:"asPlanned,omitempty"`

	// RecordDecision
	Approved bool   `json:"approved,omitempty"`
	All      bool   `json:"all,omitempty"`
	Reason   string `json:"reason,omitempty"`

	// RecordChanged
	Changes []Change  `json:"changes,omitempty"`
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Hash is the content hash courier uses for replies and file contents:
// SHA-256, in hex.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Turn is the record of one turn: what the reply was, what each command
// did, the person's answers, what undo did. Opened by History.Turn, it
// also records what the turn's commands change in the workspace.
type Turn struct {
	Sequence int
	Records  []Record
	path     string
	f        *os.File // open for appending; nil for ReadTurn
	dirty    bool     // records added since the last Sync
	newDirs  []string // folders whose new entries the next Sync makes durable
	rec      *recorder
}

func (s Store) turnPath(id string, seq int) string {
	return filepath.Join(s.Folder(id), "turns", fmt.Sprintf("%04d.jsonl", seq))
}

// Turns lists the sequence numbers that have a turn, oldest first.
func (s Store) Turns(id string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(s.Folder(id), "turns"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list turns of %s: %w", id, err)
	}
	var seqs []int
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if n, err := strconv.Atoi(name); ok && err == nil {
			seqs = append(seqs, n)
		}
	}
	sort.Ints(seqs)
	return seqs, nil
}

// OpenTurn opens (creating it if needed) the record of the turn answering
// request seq for appending. A last line torn by a crash is cut off: it
// was never acknowledged, so nothing relied on it.
func (s Store) OpenTurn(id string, seq int) (*Turn, error) {
	t, good, err := s.readTurn(id, seq)
	if errors.Is(err, fs.ErrNotExist) {
		// A new record: its file's entry, and its folder's, are synced
		// with it.
		t.newDirs = []string{filepath.Dir(t.path), s.Folder(id)}
		err = os.MkdirAll(t.newDirs[0], 0o755)
	}
	if err == nil {
		t.f, err = os.OpenFile(t.path, os.O_RDWR|os.O_CREATE, 0o644)
	}
	if err == nil {
		if err = t.f.Truncate(good); err == nil {
			_, err = t.f.Seek(good, 0)
		}
	}
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("open turn %d: %w", seq, err)
	}
	return t, nil
}

// ReadTurn reads a turn's records without opening it for writing.
func (s Store) ReadTurn(id string, seq int) (*Turn, error) {
	t, _, err := s.readTurn(id, seq)
	if err != nil {
		return nil, fmt.Errorf("read turn %d: %w", seq, err)
	}
	return t, nil
}

func (s Store) readTurn(id string, seq int) (*Turn, int64, error) {
	t := &Turn{Sequence: seq, path: s.turnPath(id, seq)}
	data, err := os.ReadFile(t.path)
	if err != nil {
		return t, 0, err
	}
	good, err := t.parse(data)
	return t, good, err
}

// parse reads whole lines only: Add writes each record with its newline,
// so a last line without one was torn by a crash, even when its JSON
// happens to be complete, and is not counted (good is where it starts).
// A whole line that does not parse is damage, not a crash, and is an
// error: cutting it would silently drop the records after it.
func (t *Turn) parse(data []byte) (good int64, err error) {
	for line := 1; ; line++ {
		n := bytes.IndexByte(data[good:], '\n')
		if n < 0 {
			return good, nil
		}
		var r Record
		if err := json.Unmarshal(data[good:good+int64(n)], &r); err != nil {
			return 0, fmt.Errorf("turn record %s is damaged at line %d: %w", t.path, line, err)
		}
		for i := range r.Changes {
			r.Changes[i].Path = entryOf(&r.Changes[i]).Path
		}
		t.Records = append(t.Records, r)
		good += int64(n) + 1
	}
}

// Add writes a record without syncing it: the record survives courier
// being killed, and a power cut once Sync has run.
func (t *Turn) Add(r Record) error {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	line, err := json.Marshal(r)
	if err == nil {
		_, err = t.f.Write(append(line, '\n'))
	}
	if err != nil {
		return fmt.Errorf("turn record: %w", err)
	}
	t.dirty = true
	t.Records = append(t.Records, r)
	return nil
}

// Sync makes everything added so far durable: the contents kept first,
// then the records that refer to them, and the folders the record's file
// was made in.
func (t *Turn) Sync() error {
	if t.rec != nil {
		if err := t.rec.h.obj.sync(); err != nil {
			return err
		}
	}
	var names []string
	if t.dirty {
		names = append(names, t.path)
	}
	for _, err := range atomicfile.SyncAll(append(names, t.newDirs...), os.Open) {
		if err != nil {
			return fmt.Errorf("turn record: %w", err)
		}
	}
	t.dirty, t.newDirs = false, nil
	return nil
}

// Append writes a record durably: the call returns only once the record
// is on disk, so whatever follows may rely on it after a crash.
func (t *Turn) Append(r Record) error {
	if err := t.Add(r); err != nil {
		return err
	}
	return t.Sync()
}

// Close releases the record. What was added and not synced stays written.
func (t *Turn) Close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// Begun returns the turn's begin record, if it has one.
func (t *Turn) Begun() (Record, bool) {
	for _, r := range t.Records {
		if r.Kind == RecordBegin {
			return r, true
		}
	}
	return Record{}, false
}

// Has reports whether the turn has a record of that kind.
func (t *Turn) Has(kind RecordKind) bool {
	for _, r := range t.Records {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// Unfinished returns the begin record of the turn answering the session's
// current request when a reply was begun there but not committed. A
// complete session has none: its DONE turn keeps the last sequence number.
func (s Store) Unfinished(st *State) (Record, bool, error) {
	if st.IsComplete {
		return Record{}, false, nil
	}
	t, err := s.ReadTurn(st.SessionID, st.SequenceNumber)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	r, ok := t.Begun()
	return r, ok, nil
}

// FindReply returns the turn that applied the reply with the given hash,
// however long ago, and when (seq 0: none did). Each turn's record begins
// with its reply's hash: only the start of each is read, and the whole
// record of one that matches, whose begin record must be whole.
func (s Store) FindReply(st *State, hash string) (seq int, at time.Time, err error) {
	seqs, err := s.Turns(st.SessionID)
	head := make([]byte, 512)
	for _, n := range seqs {
		f, err := os.Open(s.turnPath(st.SessionID, n))
		if err != nil {
			return 0, at, fmt.Errorf("find reply: %w", err)
		}
		k, _ := io.ReadFull(f, head)
		f.Close()
		if !bytes.Contains(head[:k], []byte(`"replyHash":"`+hash+`"`)) {
			continue
		}
		t, err := s.ReadTurn(st.SessionID, n)
		if err != nil {
			return 0, at, err
		}
		if begin, ok := t.Begun(); ok && begin.ReplyHash == hash {
			return n, begin.At, nil
		}
	}
	return 0, at, err
}
