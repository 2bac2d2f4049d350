package runner

import (
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/shell"
)

// What the command line needs of the parts below the runner, named here so
// that it depends on the runner alone: the shape of a session id, a
// reply's hash, the variables commands get, and the errors it words for
// the person.

// ValidID reports whether id has the shape of a session id (8 hex digits).
func ValidID(id string) bool { return history.ValidID(id) }

// Hash is the hash a run is recorded under: of a reply's bytes, or an
// operations message's.
func Hash(data []byte) string { return history.Hash(data) }

// SessionFolder is the folder that holds session id's own files, under
// the root's sessions/ folder.
func (p Paths) SessionFolder(id string) string {
	return history.Store{Dir: p.Sessions}.Folder(id)
}

// AllowedVars are the names and globs of courier's environment that
// commands get; DefaultVars are set for every command, as NAME=value.
func AllowedVars() []string { return shell.AllowedVars() }

// DefaultVars: see AllowedVars.
func DefaultVars() []string { return shell.DefaultVars() }

// Errors from the session store, the engine and the snapshots that reach
// the command line as they are.
type (
	// LockedError: another process holds the session.
	LockedError = history.LockedError
	// InvalidIDError: a session id of the wrong shape.
	InvalidIDError = history.InvalidIDError
	// CorruptError: a session file that cannot be read.
	CorruptError = history.CorruptError
	// BusyTurnError: a reply offered while another reply's turn is
	// unfinished.
	BusyTurnError = engine.BusyTurnError
	// SystemError: the machine failed a file command (a full disk, an
	// I/O error); the turn stopped there, to be finished later.
	SystemError = engine.SystemError
	// UndoReport says what an undo did; TurnLog what a turn did, for
	// 'courier log'; GCReport what a collection did.
	UndoReport = history.Report
	TurnLog    = history.TurnLog
	GCReport   = history.GCReport
)

var (
	// ErrNotFound: no session of that id.
	ErrNotFound = history.ErrNotFound
	// ErrPruned: the snapshots of the turn to undo were dropped for room.
	ErrPruned = history.ErrPruned
)

// NewID is a new session id, as runs are named: for a message that could
// not run, which makes no session.
func NewID() string { return newID() }
