package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
)

// State is what sessions/<id>.json holds: the CodingAgent protocol's
// eight fields, then courier's own. Nothing in it grows with the turns.
type State struct {
	SessionID        string           `json:"sessionId"`
	Task             string           `json:"task"`
	SequenceNumber   int              `json:"sequenceNumber"`
	IsComplete       bool             `json:"isComplete"`
	CreatedAt        time.Time        `json:"createdAt"`
	UpdatedAt        time.Time        `json:"updatedAt"`
	LastResults      []command.Result `json:"lastResults"`
	ReadFileRequests []ReadRequest    `json:"readFileRequests"`

	Workspace     string   `json:"workspace"`          // absolute
	Notices       []string `json:"notices,omitempty"`  // for the LLM, above the next results
	UndoTop       int      `json:"undoTop,omitempty"`  // the turn undo takes back next (0: none)
	Undoing       *Undoing `json:"undoing,omitempty"`  // an undo under way
	Summary       string   `json:"summary,omitempty"`  // the DONE text
	Includes      []string `json:"includes,omitempty"` // patterns whose files the first request packs
	ApprovedRules []string `json:"approvedRules,omitempty"`
	Pending       *Pending `json:"pending,omitempty"`     // a command waiting for approval
	Protocol      string   `json:"protocol,omitempty"`    // "": the tags
	Messages      []string `json:"messages,omitempty"`    // the person's words for the next request
	FollowUps     []string `json:"followUps,omitempty"`   // tasks added once complete, oldest first
	Prompt        string   `json:"prompt,omitempty"`      // the next request's task when a follow-up
	NewChat       bool     `json:"newChat,omitempty"`     // next request: full protocol and machine again
	Environment   string   `json:"environment,omitempty"` // the machine as the fresh chat's request showed it
	RequestSize   int64    `json:"requestSize,omitempty"` // the request is not synced: one a power cut
	RequestSum    uint32   `json:"requestSum,omitempty"`  // damaged (size, CRC-32C) is written again
	IgnoreCut     []string `json:"ignoreCut,omitempty"`   // ignore files courier uses only part of
	Run           bool     `json:"run,omitempty"`         // a run of 'courier ops': one turn, no requests
	Preset        string   `json:"preset,omitempty"`      // the policy that checks a run's commands
}

// ReadRequest is a READ_FILE waiting for the next request: a plain path,
// as the protocol has it, or an object with a line range.
type ReadRequest struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
}

type plainRequest ReadRequest

// MarshalJSON writes a plain path when there is no range.
func (r ReadRequest) MarshalJSON() ([]byte, error) {
	if r.StartLine == 0 && r.EndLine == 0 {
		return json.Marshal(r.Path)
	}
	return json.Marshal(plainRequest(r))
}

// UnmarshalJSON reads both forms MarshalJSON writes.
func (r *ReadRequest) UnmarshalJSON(data []byte) error {
	if json.Unmarshal(data, &r.Path) != nil {
		if err := json.Unmarshal(data, (*plainRequest)(r)); err != nil {
			return fmt.Errorf("read request: %w", err)
		}
	}
	return nil
}

// Undoing is an undo of Turn under way, after which UndoTop is Below.
type Undoing struct {
	Turn  int `json:"turn"`
	Below int `json:"below"`
}

// Pending describes a command waiting for the person's decision.
type Pending struct {
	Sequence int    `json:"sequence"`
	Index    int    `json:"index"`
	Command  string `json:"command"`
	Env      string `json:"env,omitempty"` // the command's variables as shell assignments
	Reason   string `json:"reason"`
	Rule     string `json:"rule,omitempty"`
	Covers   string `json:"covers,omitempty"` // what approving "all like it" covers
}

// ValidID reports whether id has the shape of a session id.
func ValidID(id string) bool { return len(id) == 8 && strings.Trim(id, "0123456789abcdef") == "" }

// ErrNotFound is returned for a session id with no session file.
var ErrNotFound = errors.New("session not found")

// InvalidIDError is a session id of the wrong shape.
type InvalidIDError struct{ ID string }

func (e *InvalidIDError) Error() string {
	return fmt.Sprintf("'%s' is not a session id (8 hex digits)", e.ID)
}

// CorruptError is a session file that does not load (courier never replaces it).
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("session file %s is corrupt: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Store is the sessions folder.
type Store struct{ Dir string }

// Path returns the state file of a session.
func (s Store) Path(id string) string { return filepath.Join(s.Dir, id+".json") }

// Folder returns the folder holding a session's history.
func (s Store) Folder(id string) string { return filepath.Join(s.Dir, id) }

// Load reads a session's state.
func (s Store) Load(id string) (*State, error) {
	if !ValidID(id) {
		return nil, &InvalidIDError{ID: id}
	}
	p := s.Path(id)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("session %s: %w (no %s)", id, ErrNotFound, p)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, &CorruptError{Path: p, Err: err}
	}
	if st.SessionID != id || st.SequenceNumber < 1 {
		return nil, &CorruptError{Path: p, Err: fmt.Errorf("sessionId %q and sequenceNumber %d do not fit the file name", st.SessionID, st.SequenceNumber)}
	}
	return &st, nil
}

// Save writes a session's state atomically.
func (s Store) Save(st *State) error {
	f, err := s.Stage(st)
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return fmt.Errorf("save session %s: %w", st.SessionID, err)
	}
	return nil
}

// Stage is Save up to the commit (see atomicfile.CommitInOrder).
func (s Store) Stage(st *State) (*atomicfile.File, error) {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	return atomicfile.Stage(s.Path(st.SessionID), append(data, '\n'), 0o644)
}

// StageNew is Stage for a new session, refusing to replace an existing one.
func (s Store) StageNew(st *State) (*atomicfile.File, error) {
	if _, err := os.Stat(s.Path(st.SessionID)); err == nil {
		return nil, fmt.Errorf("session %s already exists", st.SessionID)
	}
	if err := os.MkdirAll(s.Folder(st.SessionID), 0o755); err != nil {
		return nil, err
	}
	return s.Stage(st)
}

// List loads every session, newest update first, and the errors of those that do not load.
func (s Store) List() ([]*State, []error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, []error{fmt.Errorf("list sessions: %w", err)}
	}
	var out []*State
	var errs []error
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() && ValidID(id) {
			if st, err := s.Load(id); err != nil {
				errs = append(errs, err)
			} else {
				out = append(out, st)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *State) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return out, errs
}

// Lock is an exclusive hold on a session: flock (LockFileEx on Windows) on
// sessions/<id>.lock, which names the holder; it ends with the process.
type Lock struct {
	f      *os.File
	holder Holder
}

// Holder describes the process that holds a lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	Doing   string    `json:"doing,omitempty"` // "waiting for a reply to request 3"
}

func (h Holder) String() string {
	s := fmt.Sprintf("%s (pid %d, since %s)", h.Command, h.PID, h.Since.Local().Format("15:04:05"))
	if h.Doing != "" {
		s += ", " + h.Doing
	}
	return s
}

// LockedError: another process holds the session.
type LockedError struct {
	Session string
	Holder  *Holder // if the lock file says
}

func (e *LockedError) Error() string {
	who := "another courier process"
	if e.Holder != nil {
		who = e.Holder.String()
	}
	return fmt.Sprintf("session %s is in use by %s", e.Session, who)
}

var errBusy = errors.New("the lock is held")

// Lock takes the session's lock without waiting; what names the holder ("courier watch").
func (s Store) Lock(id, what string) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(s.Dir, id+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	err = lockFile(f, true)
	// A holder killed while it started a command leaves the lock with the
	// child until its exec closes it: wait up to a second for a dead one.
	for wait := 0; errors.Is(err, errBusy) && wait < 100 && readHolder(f) != nil && !processAlive(readHolder(f).PID); wait++ {
		time.Sleep(10 * time.Millisecond)
		err = lockFile(f, true)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, errBusy) {
			return nil, &LockedError{Session: id, Holder: readHolder(f)}
		}
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	l := &Lock{f: f, holder: Holder{PID: os.Getpid(), Command: what, Since: time.Now().UTC()}}
	l.write()
	return l, nil
}

// Note records what the holder is doing now.
func (l *Lock) Note(doing string) {
	if l != nil && l.f != nil && l.holder.Doing != doing {
		l.holder.Doing = human.Cut(doing, 200)
		l.write()
	}
}

// write names the holder in one padded write: a reader never sees half of two.
func (l *Lock) write() {
	if h, err := json.Marshal(l.holder); err == nil && len(h) < holderSize {
		l.f.WriteAt(append(h, bytes.Repeat([]byte{' '}, holderSize-len(h))...), 0)
	}
}

const holderSize = 1024

func readHolder(f *os.File) *Holder {
	buf := make([]byte, holderSize)
	n, _ := f.ReadAt(buf, 0)
	var h Holder
	if json.Unmarshal(buf[:n], &h) != nil || h.PID <= 0 {
		return nil
	}
	return &h
}

// Holder returns who holds the session's lock, if anyone does.
func (s Store) Holder(id string) (Holder, bool) {
	f, err := os.Open(filepath.Join(s.Dir, id+".lock"))
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	// A shared lock is refused only while an exclusive one is held.
	if err := lockFile(f, false); err == nil {
		unlockFile(f)
		return Holder{}, false
	}
	if h := readHolder(f); h != nil {
		return *h, true
	}
	return Holder{Command: "another courier process"}, true
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
