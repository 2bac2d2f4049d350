package history

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/workspace"
)

// Options shape what a session's history keeps of its workspace.
type Options struct {
	Off               bool     // keep only what file commands change (snapshots = false)
	Exclude, Include  []string // .gitignore-style: left out of, or kept in spite of, .gitignore
	Budget, TurnLimit int64    // the contents' disk space after each turn; what one turn reads
	Private           []string // courier's own folders, never touched
}

// Defaults of the snapshot_budget and snapshot_limit settings.
const (
	DefaultBudget    = 512 << 20
	DefaultTurnLimit = 1 << 30
)

// History is one session's history opened on its workspace. Changing it
// needs the session's lock; reading it does not.
type History struct {
	store   Store
	id, dir string
	ws      *workspace.Workspace
	opts    Options
	scope   scope
	obj     *objects
}

// Open opens the history of session id, whose workspace is ws.
func (s Store) Open(id string, ws *workspace.Workspace, opts Options) (*History, error) {
	opts.Budget, opts.TurnLimit = cmp.Or(opts.Budget, DefaultBudget), cmp.Or(opts.TurnLimit, DefaultTurnLimit)
	resolved := func(p string) string {
		p, _ = filepath.Abs(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	sc := scope{gitignore: ws.GitIgnore(), private: map[string]bool{}}
	for _, d := range append([]string{s.Dir}, opts.Private...) {
		if rel, err := filepath.Rel(resolved(ws.Dir()), resolved(d)); err == nil && rel != "." && filepath.IsLocal(rel) {
			sc.private[filepath.ToSlash(rel)] = true
		}
	}
	var err error
	if sc.exclude, err = workspace.CompilePatterns(opts.Exclude); err != nil {
		return nil, fmt.Errorf("snapshot exclusions: %w", err)
	}
	if sc.include, err = workspace.CompilePatterns(opts.Include); err != nil {
		return nil, fmt.Errorf("snapshot inclusions: %w", err)
	}
	dir := s.Folder(id)
	return &History{store: s, id: id, dir: dir, ws: ws, opts: opts, scope: sc,
		obj: &objects{dir: filepath.Join(dir, "objects"), bw: bufio.NewWriterSize(nil, 256<<10)}}, nil
}

// Close releases the pack being written.
func (h *History) Close() { h.obj.close() }

// Budget is the snapshot budget.
func (h *History) Budget() int64 { return h.opts.Budget }

func (h *History) indexPath() string { return filepath.Join(h.dir, "index") }

// tidy removes what a crash left half-written (under the session lock).
func (h *History) tidy() error {
	for _, d := range []string{h.dir, h.obj.dir} {
		if err := atomicfile.CleanTemps(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Turn opens the record of turn seq to write it and record the
// workspace; a turn begun before is taken up where it stopped.
func (h *History) Turn(seq int) (*Turn, error) {
	if err := h.tidy(); err != nil {
		return nil, err
	}
	t, err := h.store.OpenTurn(h.id, seq)
	t.h, t.obj = h, h.obj
	return t, err
}

// recording loads the index when the turn first needs it: the saved one,
// with the records of the turns it does not hold replayed onto it.
func (t *Turn) recording() error {
	if t.ix != nil {
		return nil
	}
	ix, err := loadIndex(t.h.indexPath())
	if err != nil {
		return err
	}
	for seq := ix.Turn + 1; seq <= t.Sequence; seq++ {
		old, err := t, error(nil)
		if seq < t.Sequence {
			old, err = t.h.store.ReadTurn(t.h.id, seq)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, rec := range old.Records {
			if rec.Kind == RecordChanged {
				ix.apply(rec.Changes)
			}
		}
	}
	t.ix, t.lim = ix, &limits{t.h.opts.TurnLimit, t.h.opts.Budget - t.obj.size()}
	return nil
}

// Before records what changed at a file command's paths, or with nil
// anywhere, since last seen: the new starting point, not the turn's doing.
func (t *Turn) Before(paths []string) error {
	_, err := t.record(-1, paths)
	return err
}

// After records and returns what command i changed at paths, or with nil
// anywhere (nothing when Off), or what was recorded for i before a crash.
func (t *Turn) After(i int, paths []string) (Changes, error) {
	for k, rec := range t.Records {
		if rec.Kind == RecordChanged && rec.Index == i {
			return changesAt(t.Records, k), nil
		}
	}
	return t.record(i, paths)
}

// record brings the index up to date with the workspace (all of it, or
// paths) and records what changed before command i (i < 0) or by it.
func (t *Turn) record(i int, paths []string) (Changes, error) {
	before := i < 0
	err := t.recording()
	if err != nil || paths == nil && (t.h.opts.Off || before && t.scanned) {
		return Changes{}, err
	}
	var only map[string]uint8 // see scanner.only
	if paths != nil {
		only = map[string]uint8{}
	}
	for _, p := range paths {
		if c, err := workspace.Clean(p); err == nil && c != "." {
			for q := parentOf(c); q != ""; q = parentOf(q) {
				only[q] = max(only[q], 1)
			}
			only[c] = 2
		}
	}
	entries, skipped, blocked, err := t.h.scan(t.ix.Entries, !before, before, t.lim, only)
	if blocked { // a symlinked folder on the way: only a full scan sees where the writes land
		only = nil
		entries, skipped, _, err = t.h.scan(t.ix.Entries, !before, before, t.lim, nil)
	}
	if err != nil {
		return Changes{}, err
	}
	changes := compare(t.ix.Entries, entries)
	t.ix.Entries, t.scanned = entries, t.scanned || only == nil
	if before && len(changes) > 1000 && len(changes) > len(t.ix.Entries)/4 {
		// Mostly new (a first scan): saving the index costs less than
		// recording it all. It keeps its turn number, so this turn's
		// records are replayed onto it if the turn is taken up.
		changes, err = nil, t.saveIndex()
	}
	// What could not be kept is recorded even unchanged: it says why a
	// later change of it cannot be undone.
	if err != nil || before && len(changes) == 0 && len(skipped) == 0 {
		return Changes{}, err
	}
	if err := t.Add(Record{Kind: RecordChanged, Index: i, Changes: changes, Skipped: skipped}); err != nil || before {
		return Changes{}, err
	}
	return changesAt(t.Records, len(t.Records)-1), nil
}

// saveIndex saves the index once the contents it names are durable.
func (t *Turn) saveIndex() error {
	if err := t.obj.sync(); err != nil {
		return err
	}
	return t.ix.save(t.h.indexPath())
}

// Keep stores content a turn needs to finish after a crash and returns
// its hash; it is durable once the record is synced.
func (t *Turn) Keep(data string) (string, error) {
	h := Hash(data)
	return h, t.obj.put(h, strings.NewReader(data), int64(len(data)))
}

// Kept reports whether that content is kept.
func (t *Turn) Kept(hash string) bool { return t.obj.has(hash) }

// Content returns kept content, checked against its hash.
func (t *Turn) Content(hash string) (string, error) { return t.obj.read(hash) }

// Finish saves the index as the next turn's start and brings the contents
// within the budget. It returns the warnings for the person.
func (t *Turn) Finish() ([]string, error) {
	if t.ix == nil {
		return nil, nil
	}
	t.ix.Turn = max(t.ix.Turn, t.Sequence)
	err := t.Sync()
	if err == nil {
		err = t.ix.save(t.h.indexPath())
	}
	var gc GCReport
	if err == nil && t.obj.size() > t.h.opts.Budget {
		gc, err = t.h.GC(t.h.opts.Budget)
	}
	warnings := []string{partlyUndoable(t.Sequence, notUndoable(t.Records, plan(t.Records))), gc.Warning(t.h.opts.Budget)}
	return slices.DeleteFunc(warnings, func(w string) bool { return w == "" }), err
}

// Refresh records the workspace of a new session, so its first turn need
// not read it.
func (h *History) Refresh() error {
	if h.opts.Off {
		return nil
	}
	t := &Turn{h: h, obj: h.obj}
	seqs, err := h.store.Turns(h.id)
	if err := cmp.Or(h.tidy(), err, t.recording()); err != nil || len(seqs) > 0 && seqs[len(seqs)-1] > t.ix.Turn {
		return err // a turn is under way: it records what it needs
	}
	if t.ix.Entries, _, _, err = h.scan(t.ix.Entries, false, true, t.lim, nil); err != nil {
		return err
	}
	return t.saveIndex()
}

// RecordKind names a record of a turn.
type RecordKind string

// The records of a turn, in the order a turn writes them.
const (
	RecordBegin    RecordKind = "begin"    // which reply, which commands
	RecordApply    RecordKind = "apply"    // a file change, before it is made
	RecordStart    RecordKind = "start"    // a command about to run
	RecordResult   RecordKind = "result"   // a command finished
	RecordDecision RecordKind = "decision" // the person's answer to a question
	RecordChanged  RecordKind = "changed"  // what command Index changed (-1: what changed meanwhile)
	RecordUndone   RecordKind = "undone"
	RecordPruned   RecordKind = "pruned" // its contents were dropped for the budget
)

// Record is one line of a turn's record.
type Record struct {
	Kind  RecordKind `json:"kind"`
	Index int        `json:"index"`
	At    time.Time  `json:"at"`

	// RecordBegin; UndoPrev is the session's UndoTop when the turn began;
	// Bodies, by command, the Contents the content store keeps (bigBody).
	ReplyHash string            `json:"replyHash,omitempty"`
	ReplyFile string            `json:"replyFile,omitempty"`
	Commands  []command.Command `json:"commands,omitempty"`
	UndoPrev  int               `json:"undoPrev,omitempty"`
	Bodies    map[int]string    `json:"bodies,omitempty"`
	obj       *objects          // where a record read from disk finds Bodies

	// RecordApply: the file's content hashes before ("" absent) and after
	// ("" deleted), its mode before, for a line-range edit the hash of the text
	// its numbers refer to and the range replaced; its result once in place.
	Path  string      `json:"path,omitempty"`
	From  string      `json:"from,omitempty"`
	To    string      `json:"to,omitempty"`
	Mode  fs.FileMode `json:"mode,omitempty"`
	Base  string      `json:"base,omitempty"`
	Range *[2]int     `json:"range,omitempty"`

	// RecordResult; AsPlanned stands for the apply record's Result.
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

// Hash is courier's content hash: SHA-256, in hex, read in pieces (not a copy of 20 MB).
func Hash(data string) string {
	h, _, _ := hashOf(struct{ io.Reader }{strings.NewReader(data)})
	return h
}

// Turn is the record of one turn. Opened by History.Turn, it also records
// what the turn's commands change in the workspace.
type Turn struct {
	Sequence int
	Records  []Record
	path     string
	f        *os.File // open for appending; nil for ReadTurn
	// Records added since the last Sync, written to f only once the contents
	// they name are listed: no record names what a crash lost from the store.
	pending bytes.Buffer
	newDirs []string // folders whose new entries the next Sync makes durable
	obj     *objects // the session's content store
	h       *History // set by History.Turn, with the index as the turn saw it and what it may read and store
	ix      *index
	lim     *limits
	scanned bool // the index reflects a full scan made in this turn
}

func (s Store) turnPath(id string, seq int) string {
	return filepath.Join(s.Folder(id), "turns", fmt.Sprintf("%04d.jsonl", seq))
}

// Turns lists the sequence numbers that have a turn, oldest first.
func (s Store) Turns(id string) ([]int, error) {
	seqs, _, err := numbered(filepath.Join(s.Folder(id), "turns"))
	if err != nil {
		return nil, fmt.Errorf("list turns of %s: %w", id, err)
	}
	return seqs, nil
}

// numbered lists the numbers naming the files of dir ("0003.jsonl",
// "000001.pack"), ascending, once each, and their disk space in 4 KB blocks.
func numbered(dir string) (nums []int, disk int64, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	for _, e := range entries {
		name, ext, _ := strings.Cut(e.Name(), ".")
		if n, err := strconv.Atoi(name); err == nil && n > 0 && !strings.Contains(ext, ".") {
			nums = append(nums, n)
		}
		if info, err := e.Info(); err == nil {
			disk += (info.Size() + 4095) &^ 4095
		}
	}
	slices.Sort(nums)
	return slices.Compact(nums), disk, nil
}

// OpenTurn opens the record of the turn answering request seq for
// appending, cutting off a last line a crash tore (nothing relied on it);
// on an error, the turn it returns is closed.
func (s Store) OpenTurn(id string, seq int) (*Turn, error) {
	t, good, err := s.readTurn(id, seq)
	if errors.Is(err, fs.ErrNotExist) {
		t.newDirs = []string{filepath.Dir(t.path), s.Folder(id)}
		err = os.MkdirAll(t.newDirs[0], 0o755)
	}
	if err == nil {
		t.f, err = os.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	}
	if err == nil {
		err = t.f.Truncate(good)
	}
	if err != nil {
		t.Close()
		err = fmt.Errorf("open turn %d: %w", seq, err)
	}
	return t, err
}

// ReadTurn reads a turn's records without opening it for writing; a turn
// with no record reads as one with no records, and fs.ErrNotExist.
func (s Store) ReadTurn(id string, seq int) (*Turn, error) {
	t, _, err := s.readTurn(id, seq)
	if err != nil {
		err = fmt.Errorf("read turn %d: %w", seq, err)
	}
	return t, err
}

// readTurn reads whole lines only: a last line without its newline was
// torn by a crash (good is where it starts). A whole line that does not
// parse is damage, an error: cutting it would drop the records after it.
func (s Store) readTurn(id string, seq int) (t *Turn, good int64, err error) {
	t = &Turn{Sequence: seq, path: s.turnPath(id, seq), obj: &objects{dir: filepath.Join(s.Folder(id), "objects")}}
	data, err := os.ReadFile(t.path)
	for line := 1; err == nil; line++ {
		n := bytes.IndexByte(data[good:], '\n')
		if n < 0 {
			break
		}
		var r Record
		if err := json.Unmarshal(data[good:good+int64(n)], &r); err != nil {
			return t, 0, fmt.Errorf("turn record %s is damaged at line %d: %w", t.path, line, err)
		}
		for i := range r.Changes {
			r.Changes[i].Path = entryOf(&r.Changes[i]).Path
		}
		if r.Bodies != nil {
			r.obj = t.obj
		}
		t.Records = append(t.Records, r)
		good += int64(n) + 1
	}
	return t, good, err
}

// bigBody is the size from which a command's Content is kept in the
// content store, which Sync makes durable first, not in the begin record.
const bigBody = 64 << 10

// Add adds a record, written by the next Sync.
func (t *Turn) Add(r Record) error {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	w := r
	if r.Kind == RecordBegin && t.h != nil {
		w.Commands, w.Bodies = slices.Clone(r.Commands), map[int]string{}
		for i, c := range w.Commands {
			if len(c.Content) >= bigBody {
				h, err := t.Keep(c.Content)
				if err != nil {
					return fmt.Errorf("turn record: %w", err)
				}
				w.Commands[i].Content, w.Bodies[i] = "", h
			}
		}
	}
	if err := json.NewEncoder(&t.pending).Encode(w); err != nil {
		return fmt.Errorf("turn record: %w", err)
	}
	t.Records = append(t.Records, r)
	return nil
}

// Command returns a begin record's command i (0 <= i < len(Commands)),
// its body read back when the content store keeps it.
func (r Record) Command(i int) (command.Command, error) {
	c := r.Commands[i]
	if h, ok := r.Bodies[i]; ok {
		data, err := r.obj.read(h)
		if err != nil {
			return c, fmt.Errorf("command %d of the turn: %w", i+1, err)
		}
		c.Content = data
	}
	return c, nil
}

// AllCommands returns a begin record's commands, as Command does.
func (r Record) AllCommands() (cmds []command.Command, err error) {
	cmds = make([]command.Command, len(r.Commands))
	for i := range cmds {
		if cmds[i], err = r.Command(i); err != nil {
			return nil, err
		}
	}
	return cmds, nil
}

// Sync makes what was added durable: the contents kept first, then the
// records that refer to them, and the folders a new record was made in.
func (t *Turn) Sync() error {
	err := t.obj.sync()
	if err == nil && t.pending.Len() > 0 {
		if _, err = t.pending.WriteTo(t.f); err == nil {
			err = t.f.Sync()
		}
	}
	for err == nil && len(t.newDirs) > 0 {
		if err = atomicfile.SyncDir(t.newDirs[0]); err == nil {
			t.newDirs = t.newDirs[1:]
		}
	}
	if err != nil {
		return fmt.Errorf("turn record: %w", err)
	}
	return nil
}

// Append writes a record durably.
func (t *Turn) Append(r Record) error { return cmp.Or(t.Add(r), t.Sync()) }

// Mark gives turn seq a record of kind, unless it has one.
func (s Store) Mark(id string, seq int, kind RecordKind) error {
	t, err := s.OpenTurn(id, seq)
	if err == nil && !t.Has(kind) {
		err = t.Append(Record{Kind: kind})
	}
	t.Close()
	return err
}

// Close releases the record, writing what was added.
func (t *Turn) Close() {
	if t.f != nil {
		t.Sync()
		t.f.Close()
		t.f = nil
	}
}

// Begun returns the turn's begin record, if it has one.
func (t *Turn) Begun() (Record, bool) {
	i := slices.IndexFunc(t.Records, func(r Record) bool { return r.Kind == RecordBegin })
	if i < 0 {
		return Record{}, false
	}
	return t.Records[i], true
}

// Has reports whether the turn has a record of that kind.
func (t *Turn) Has(kind RecordKind) bool {
	return slices.ContainsFunc(t.Records, func(r Record) bool { return r.Kind == kind })
}

// Unfinished returns the begin record of the session's current turn if it
// was begun and not committed (a complete session's last turn, its DONE, was).
func (s Store) Unfinished(st *State) (Record, bool, error) {
	if st.IsComplete {
		return Record{}, false, nil
	}
	t, err := s.ReadTurn(st.SessionID, st.SequenceNumber)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, err
	}
	r, ok := t.Begun()
	return r, ok, nil
}

// FindReply returns the turn that applied the reply with that hash, and
// when (seq 0: none did). Each record begins with its reply's hash: only
// the start of each is read, and the whole record of one that matches.
func (s Store) FindReply(st *State, hash string) (seq int, at time.Time, err error) {
	seqs, err := s.Turns(st.SessionID)
	for _, n := range seqs {
		f, err := os.Open(s.turnPath(st.SessionID, n))
		if err != nil {
			return 0, at, fmt.Errorf("find reply: %w", err)
		}
		head, _ := io.ReadAll(io.LimitReader(f, 512))
		f.Close()
		if !bytes.Contains(head, []byte(`"replyHash":"`+hash+`"`)) {
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

// Unfinished is Store.Unfinished, for the engine, which holds a History.
func (h *History) Unfinished(st *State) (Record, bool, error) { return h.store.Unfinished(st) }
