// Package loop drives a session from turn to turn: it reads and routes a
// reply, refuses duplicates and stale answers, has the engine apply it,
// writes the next outbox and commits the session, in an order that a crash
// at any point can be recovered from.
package loop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/hint"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// Paths are the folders courier works with.
type Paths struct {
	Root     string
	Inbox    string
	Outbox   string
	Sessions string
	// Workspace is the folder new sessions work on; a resumed session keeps
	// the folder it was created with.
	Workspace string
}

// DefaultPaths returns the standard layout under root.
func DefaultPaths(root string) Paths {
	return Paths{
		Root:      root,
		Inbox:     filepath.Join(root, "inbox"),
		Outbox:    filepath.Join(root, "outbox"),
		Sessions:  filepath.Join(root, "sessions"),
		Workspace: filepath.Join(root, "workspace"),
	}
}

// Ensure creates the folders that are missing.
func (p Paths) Ensure() error {
	for _, d := range []string{p.Inbox, p.Outbox, p.Sessions, p.Workspace} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	return nil
}

// Options tune the loop.
type Options struct {
	// MaxReply is the largest reply accepted, in bytes (default 20 MB).
	MaxReply int64
	// ListLimit is how many files the workspace listing shows before it
	// summarises folders (default 300).
	ListLimit int
	// ReadLines is how many lines of one requested file an outbox shows
	// before cutting (default 500).
	ReadLines int
	// TokenBudget is the estimated tokens a request should stay within:
	// the first request's pack of included files fills what the rest
	// leaves (0: no limit).
	TokenBudget int
}

// Loop runs sessions in one root.
type Loop struct {
	Paths Paths
	Store session.Store
	opts  Options
}

// New returns a loop for the given folders.
func New(paths Paths, opts Options) *Loop {
	if opts.MaxReply == 0 {
		opts.MaxReply = 20 << 20
	}
	if opts.ListLimit == 0 {
		opts.ListLimit = 300
	}
	if opts.ReadLines == 0 {
		opts.ReadLines = 500
	}
	return &Loop{Paths: paths, Store: session.Store{Dir: paths.Sessions}, opts: opts}
}

// OutboxPath is where the outbox for a sequence of a session lives.
func (l *Loop) OutboxPath(id string, seq int) string {
	return filepath.Join(l.Paths.Outbox, fmt.Sprintf("%s_seq%04d.txt", id, seq))
}

// NewSession creates a session for task and writes its first outbox.
func (l *Loop) NewSession(task string, includes []string) (*session.State, string, error) {
	task = strings.TrimSpace(task)
	if task == "" {
		return nil, "", hint.Wrap(errors.New("the task is empty"), `describe the task, e.g. courier new "add a --verbose flag"`)
	}
	ws, err := filepath.Abs(l.Paths.Workspace)
	if err != nil {
		return nil, "", fmt.Errorf("workspace: %w", err)
	}
	if info, err := os.Stat(ws); err != nil || !info.IsDir() {
		return nil, "", hint.Wrap(fmt.Errorf("workspace %s is not a folder", ws), "create it, or point --workspace at your project folder")
	}
	now := time.Now().UTC()
	st := &session.State{
		SessionID:        newID(),
		Task:             task,
		SequenceNumber:   1,
		CreatedAt:        now,
		UpdatedAt:        now,
		LastResults:      []command.Result{},
		ReadFileRequests: []session.ReadRequest{},
		Workspace:        ws,
		Includes:         includes,
	}
	for {
		if _, err := os.Stat(l.Store.Path(st.SessionID)); errors.Is(err, os.ErrNotExist) {
			break
		}
		st.SessionID = newID()
	}
	// The outbox is written first: a session file always has its outbox.
	p, err := l.WriteOutbox(st)
	if err != nil {
		return nil, "", err
	}
	if err := l.Store.Create(st); err != nil {
		os.Remove(p)
		return nil, "", err
	}
	return st, p, nil
}

// newID is the first 8 hex digits of a random UUID, as the protocol says.
func newID() string { return strings.ReplaceAll(uuid.NewString(), "-", "")[:8] }

// OpenWorkspace opens the folder a session works on.
func (l *Loop) OpenWorkspace(st *session.State) (*workspace.Workspace, error) {
	ws, err := workspace.Open(st.Workspace)
	if err != nil {
		return nil, hint.Wrap(fmt.Errorf("session %s: %w", st.SessionID, err), "the session's workspace folder must exist")
	}
	return ws, nil
}

// EnsureOutbox rewrites the session's current outbox if it is missing and
// returns its path.
func (l *Loop) EnsureOutbox(st *session.State) (string, bool, error) {
	p := l.OutboxPath(st.SessionID, st.SequenceNumber)
	if _, err := os.Stat(p); err == nil {
		return p, false, nil
	}
	p, err := l.WriteOutbox(st)
	return p, err == nil, err
}

// WriteOutbox renders the session's current outbox and writes it
// atomically.
func (l *Loop) WriteOutbox(st *session.State) (string, error) {
	text, err := l.RenderOutbox(st)
	if err != nil {
		return "", err
	}
	p := l.OutboxPath(st.SessionID, st.SequenceNumber)
	if err := atomicfile.Write(p, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("write outbox: %w", err)
	}
	return p, nil
}

// RenderOutbox builds the text of the session's current outbox from its
// state and the workspace as it is now.
func (l *Loop) RenderOutbox(st *session.State) (string, error) {
	ws, err := l.OpenWorkspace(st)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	files, err := ws.List(workspace.ListOptions{MaxEntries: l.opts.ListLimit, GitIgnore: true})
	if err != nil {
		return "", err
	}
	o := protocol.Outbox{
		Session:  st.SessionID,
		Sequence: st.SequenceNumber,
		Task:     st.Task,
		Files:    files,
		Notices:  st.Notices,
	}
	if st.SequenceNumber > 1 {
		o.Results = st.LastResults
		if o.Results == nil {
			o.Results = []command.Result{}
		}
	}
	o.Requested = l.requested(ws, st.ReadFileRequests)
	if st.SequenceNumber == 1 && len(st.Includes) > 0 {
		o.Requested = append(o.Requested, l.pack(ws, st, o)...)
	}
	return protocol.Render(o), nil
}

// Outcome is what processing one reply came to.
type Outcome struct {
	State  *session.State
	Engine engine.Outcome
	// Outbox is the next outbox, "" when the session is complete or waits
	// for approval.
	Outbox string
	// MovedTo is where the reply file went.
	MovedTo string
}
