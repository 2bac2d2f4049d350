package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
)

// RecordKind names a journal record.
type RecordKind string

// The journal records of a turn, in the order they are written.
const (
	// RecordBegin is written before anything executes: which reply, which
	// commands.
	RecordBegin RecordKind = "begin"
	// RecordChange is written just before a file change, with the content
	// hashes that let recovery tell whether the change happened. Its kind
	// on disk is "apply", as journals have always had it.
	RecordChange RecordKind = "apply"
	// RecordStart is written just before a command starts running.
	RecordStart RecordKind = "start"
	// RecordResult is written once a command is finished.
	RecordResult RecordKind = "result"
	// RecordDecision records the person's answer to an approval question.
	RecordDecision RecordKind = "decision"
	// RecordUndone marks a turn whose file changes were reverted.
	RecordUndone RecordKind = "undone"
)

// Record is one line of a turn's journal.
type Record struct {
	Kind  RecordKind `json:"kind"`
	Index int        `json:"index"`
	At    time.Time  `json:"at"`

	// RecordBegin
	ReplyHash string            `json:"replyHash,omitempty"`
	ReplyFile string            `json:"replyFile,omitempty"`
	Commands  []command.Command `json:"commands,omitempty"`
	// UndoPrev is the turn undo reverts after this one: the session's
	// UndoTop when this turn began. Journals written before courier kept
	// it have none.
	UndoPrev *int `json:"undoPrev,omitempty"`

	// RecordChange
	Change *Change `json:"change,omitempty"`

	// RecordResult; a file change's result that is its change record's Done is
	// written as AsPlanned instead of again in full.
	Result    *command.Result `json:"result,omitempty"`
	AsPlanned bool            `json:"asPlanned,omitempty"`

	// RecordDecision
	Approved bool   `json:"approved,omitempty"`
	All      bool   `json:"all,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Change describes one file change before it is made.
type Change struct {
	Path string `json:"path"`
	// Before is the hash of the content before the change, "" when the
	// file did not exist. The turn keeps that content (Turn.Blob) when it
	// is the turn's first change of the file.
	Before     string      `json:"before,omitempty"`
	BeforeMode fs.FileMode `json:"beforeMode,omitempty"`
	// After is the hash of the content after the change; a delete has
	// none. The content itself is not kept: it follows from Before and the
	// command.
	After  string `json:"after,omitempty"`
	Delete bool   `json:"delete,omitempty"`
	// CreatedDirs are the folders the change makes, outermost first.
	CreatedDirs []string `json:"createdDirs,omitempty"`
	// Base and Range describe a line-range edit: the hash of the text its
	// line numbers refer to and the range it replaced there, so later
	// edits of the same reply can still be placed. The turn keeps that
	// text when its earlier records cannot rebuild it.
	Base  string `json:"base,omitempty"`
	Range [2]int `json:"range,omitempty"`
	// Done is the result to record once the change is in place.
	Done command.Result `json:"done"`
}

// Hash is the content hash courier uses for replies and file contents.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Turn is the on-disk record of processing one reply: its journal, and the
// file contents undo and recovery need that the journal cannot rebuild.
type Turn struct {
	Dir      string
	Sequence int
	Records  []Record
	f        *os.File // the journal, open for appending; nil for ReadTurn
	dirty    bool     // records added since the last Sync
	newDirs  []string // folders whose new entries the next Sync makes durable
	blobs    pack
	legacy   bool // the turn has a blobs folder of an earlier courier version
}

// turnDir returns the folder of the turn that answers outbox seq.
func (s Store) turnDir(id string, seq int) string {
	return filepath.Join(s.Folder(id), "turns", fmt.Sprintf("%04d", seq))
}

// Turns lists the sequence numbers that have a turn folder, oldest first.
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
		if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() {
			seqs = append(seqs, n)
		}
	}
	sort.Ints(seqs)
	return seqs, nil
}

// journalName is the file of a turn's records, one JSON object per line.
const journalName = "journal.jsonl"

// legacyBlobs is the folder where turns written by earlier courier versions
// kept one file per content.
const legacyBlobs = "blobs"

// OpenTurn opens (creating if needed) the turn folder and its journal,
// reading the records already there. A last line torn by a crash is cut
// off: it was never acknowledged, so nothing relied on it. The same goes
// for a torn last entry of the kept contents.
func (s Store) OpenTurn(id string, seq int) (*Turn, error) {
	dir := s.turnDir(id, seq)
	newDirs, err := mkdirs(dir)
	if err != nil {
		return nil, fmt.Errorf("open turn %d: %w", seq, err)
	}
	// Only the lock holder writes here, so any temporary file is a crash's.
	for _, d := range []string{dir, filepath.Join(dir, legacyBlobs)} {
		if err := atomicfile.CleanTemps(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if err := cleanKept(dir); err != nil {
		return nil, err
	}
	t := &Turn{Dir: dir, Sequence: seq, blobs: pack{path: filepath.Join(dir, packName)}}
	p := filepath.Join(dir, journalName)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		newDirs = append(newDirs, dir)
	} else if err != nil {
		return nil, fmt.Errorf("open turn %d: %w", seq, err)
	}
	records, good, err := parseJournal(data)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", p, err)
	}
	t.Records = records
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open turn %d: %w", seq, err)
	}
	if good < len(data) {
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return nil, fmt.Errorf("repair journal of turn %d: %w", seq, err)
		}
	}
	if _, err := f.Seek(int64(good), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("open turn %d: %w", seq, err)
	}
	t.f = f
	if err := t.blobs.load(true); err != nil {
		f.Close()
		return nil, fmt.Errorf("open turn %d: %w", seq, err)
	}
	t.newDirs = newDirs
	t.legacy = isDir(filepath.Join(dir, legacyBlobs))
	return t, nil
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// mkdirs makes dir and its missing parents and returns the folders whose
// entries changed (the parent of each folder made), outermost first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		_, err := os.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return nil, err
		}
		missing = append(missing, d)
	}
	var changed []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		changed = append(changed, filepath.Dir(missing[i]))
	}
	return changed, nil
}

// ReadTurn reads a turn's records without opening it for writing.
func (s Store) ReadTurn(id string, seq int) (*Turn, error) {
	dir := s.turnDir(id, seq)
	p := filepath.Join(dir, journalName)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read turn %d: %w", seq, err)
	}
	records, _, err := parseJournal(data)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", p, err)
	}
	return &Turn{Dir: dir, Sequence: seq, Records: records, blobs: pack{path: filepath.Join(dir, packName)},
		legacy: isDir(filepath.Join(dir, legacyBlobs))}, nil
}

// parseJournal reads whole lines only: Add writes each record with its
// newline, so a last line without one was torn by a crash, even when its
// JSON happens to be complete, and is not counted (good is where it
// starts). A whole line that does not parse is damage, not a crash, and is
// an error: cutting it would silently drop the records after it.
func parseJournal(data []byte) (records []Record, good int, err error) {
	for line := 1; ; line++ {
		n := bytes.IndexByte(data[good:], '\n')
		if n < 0 {
			return records, good, nil
		}
		var r Record
		if err := json.Unmarshal(data[good:good+n], &r); err != nil {
			return nil, 0, fmt.Errorf("damaged at line %d: %w", line, err)
		}
		records = append(records, r)
		good += n + 1
	}
}

// Add writes a record to the journal without syncing it: the record
// survives courier being killed, and a power cut once Sync has run.
func (t *Turn) Add(r Record) error {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := t.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	t.dirty = true
	t.Records = append(t.Records, r)
	return nil
}

// Sync makes everything added so far durable: the kept contents first,
// then the records that refer to them, then the entries of the files and
// folders the turn created.
func (t *Turn) Sync() error {
	if err := t.blobs.sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	// The records and the folder entries do not depend on each other:
	// they are synced together.
	var names []string
	if t.dirty {
		names = append(names, t.f.Name())
	}
	names = append(names, t.newDirs...)
	for _, err := range atomicfile.SyncAll(names, os.Open) {
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	t.dirty, t.newDirs = false, nil
	return nil
}

// Append writes a record durably: the call returns only once the record is
// on disk, so whatever follows may rely on it after a crash.
func (t *Turn) Append(r Record) error {
	if err := t.Add(r); err != nil {
		return err
	}
	return t.Sync()
}

// Close releases the journal. What was added and not synced stays written.
func (t *Turn) Close() error {
	t.blobs.close()
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// SaveBlob keeps content with the turn, once however often it is saved,
// and returns its hash. It is durable after the next Sync.
func (t *Turn) SaveBlob(data []byte) (string, error) {
	h := Hash(data)
	if t.HasBlob(h) {
		return h, nil
	}
	created, err := t.blobs.save(h, data)
	if err != nil {
		return "", fmt.Errorf("keep a copy: %w", err)
	}
	if created {
		t.newDirs = append(t.newDirs, t.Dir)
	}
	return h, nil
}

// HasBlob reports whether the turn keeps the content with this hash.
func (t *Turn) HasBlob(hash string) bool {
	if t.blobs.has(hash) {
		return true
	}
	if !t.legacy {
		return false
	}
	_, err := os.Stat(filepath.Join(t.Dir, legacyBlobs, hash))
	return err == nil
}

// Blob returns kept content by hash, checked against it.
func (t *Turn) Blob(hash string) ([]byte, error) {
	data, err := t.blobs.read(hash)
	if errors.Is(err, fs.ErrNotExist) && t.legacy {
		data, err = os.ReadFile(filepath.Join(t.Dir, legacyBlobs, hash))
	}
	if err != nil {
		return nil, fmt.Errorf("copy %s: %w", hash, err)
	}
	if Hash(data) != hash {
		return nil, fmt.Errorf("copy %s is damaged", hash)
	}
	return data, nil
}

// Stored is how many bytes of contents the turn keeps.
func (t *Turn) Stored() int64 {
	if !t.blobs.loaded && t.blobs.load(false) != nil {
		return 0
	}
	return t.blobs.size
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

// Begun returns the turn's begin record, if it has one.
func (t *Turn) Begun() (Record, bool) {
	for _, r := range t.Records {
		if r.Kind == RecordBegin {
			return r, true
		}
	}
	return Record{}, false
}

// IsUndone reports whether the turn's changes were reverted.
func (t *Turn) IsUndone() bool {
	for _, r := range t.Records {
		if r.Kind == RecordUndone {
			return true
		}
	}
	return false
}

// Changes returns the apply records of the turn in order.
func (t *Turn) Changes() []Record {
	var out []Record
	for _, r := range t.Records {
		if r.Kind == RecordChange && r.Change != nil {
			out = append(out, r)
		}
	}
	return out
}
