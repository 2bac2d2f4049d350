package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// idPattern is the shape of a session id: the first 8 hex digits of a UUID.
var idPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

// ValidID reports whether id has the shape of a session id.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// ErrNotFound is returned for a session id with no session file.
var ErrNotFound = errors.New("session not found")

// InvalidIDError is a session id of the wrong shape.
type InvalidIDError struct{ ID string }

func (e *InvalidIDError) Error() string {
	return fmt.Sprintf("'%s' is not a session id (8 hex digits)", e.ID)
}

// CorruptError reports a session file that does not load. courier never
// replaces such a file: the person decides what to do with it.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("session file %s is corrupt: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Store is the sessions folder.
type Store struct {
	Dir string
}

// Path returns the state file of a session.
func (s Store) Path(id string) string { return filepath.Join(s.Dir, id+".json") }

// Folder returns the folder holding a session's journals and snapshots.
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
	return decodeState(p, id, data)
}

func decodeState(p, id string, data []byte) (*State, error) {
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, &CorruptError{Path: p, Err: err}
	}
	if st.SessionID != id || st.SequenceNumber < 1 {
		return nil, &CorruptError{Path: p, Err: fmt.Errorf("sessionId %q and sequenceNumber %d do not fit the file name", st.SessionID, st.SequenceNumber)}
	}
	return &st, nil
}

// Save writes a session's state atomically. The replies list of a state
// written by an earlier courier version moves into the reply index first.
func (s Store) Save(st *State) error {
	return commit(st, s.Stage)
}

// commit stages st with stage and commits it.
func commit(st *State, stage func(*State) (*atomicfile.File, error)) error {
	f, err := stage(st)
	if err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("save session %s: %w", st.SessionID, err)
	}
	return nil
}

// Stage is Save up to the commit: the state is written under a temporary
// name, which the file's Commit (or atomicfile.CommitInOrder, after the
// request the state names) puts in place.
func (s Store) Stage(st *State) (*atomicfile.File, error) {
	if len(st.Replies) > 0 {
		if _, err := s.caughtUp(st); err != nil {
			return nil, fmt.Errorf("save session %s: %w", st.SessionID, err)
		}
		st.Replies = nil
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("save session %s: %w", st.SessionID, err)
	}
	f, err := atomicfile.Stage(s.Path(st.SessionID), append(data, '\n'), 0o644)
	if err != nil {
		return nil, fmt.Errorf("save session %s: %w", st.SessionID, err)
	}
	return f, nil
}

// Create saves a new session, refusing to replace an existing one.
func (s Store) Create(st *State) error {
	return commit(st, s.StageNew)
}

// StageNew is Create up to the commit, as Stage is Save.
func (s Store) StageNew(st *State) (*atomicfile.File, error) {
	if _, err := os.Stat(s.Path(st.SessionID)); err == nil {
		return nil, fmt.Errorf("session %s already exists", st.SessionID)
	}
	if err := os.MkdirAll(s.Folder(st.SessionID), 0o755); err != nil {
		return nil, fmt.Errorf("create session %s: %w", st.SessionID, err)
	}
	if st.Format == 0 {
		st.Format = CurrentFormat
	}
	return s.Stage(st)
}

// List loads every session, newest update first. Files that do not load
// are returned as errors next to the sessions that do.
func (s Store) List() ([]*State, []error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, []error{fmt.Errorf("list sessions: %w", err)}
	}
	var out []*State
	var errs []error
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || e.IsDir() || !ValidID(id) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.Dir, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("read session %s: %w", id, err))
			continue
		}
		st, err := decodeState(filepath.Join(s.Dir, name), id, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, st)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, errs
}
