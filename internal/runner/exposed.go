package runner

import (
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/shell"
)

// What the command line needs of the parts below the runner, named here
// so that it depends on the runner alone.

// ValidID reports whether id has the shape of a session id (8 hex digits).
func ValidID(id string) bool { return history.ValidID(id) }

// Hash is the hash a run is recorded under: of a reply's bytes, or an
// operations message's.
func Hash(data []byte) string { return history.Hash(string(data)) }

// SessionFolder is the folder of session id's own files.
func (p Paths) SessionFolder(id string) string {
	return history.Store{Dir: p.Sessions}.Folder(id)
}

// AllowedVars are the names and globs of courier's environment that
// commands get; DefaultVars are set for every command, as NAME=value.
func AllowedVars() []string { return shell.AllowedVars() }

// DefaultVars: see AllowedVars.
func DefaultVars() []string { return shell.DefaultVars() }

// Errors and reports of the parts below that reach the command line as
// they are.
type (
	LockedError    = history.LockedError
	InvalidIDError = history.InvalidIDError
	CorruptError   = history.CorruptError
	BusyTurnError  = engine.BusyTurnError
	SystemError    = engine.SystemError
	UndoReport     = history.Report
	TurnLog        = history.TurnLog
	GCReport       = history.GCReport
)

var (
	ErrNotFound = history.ErrNotFound
	ErrPruned   = history.ErrPruned
)

// NewID is a new session id, as runs are named: for a message that could
// not run, which makes no session.
func NewID() string { return newID() }
