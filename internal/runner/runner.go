// Package runner owns a session's turns from end to end: it takes the
// session's lock, finishes a turn left unfinished, takes a reply from a
// source, has the engine apply it, puts the commands that need the person
// to an approver, commits the turn in a crash-safe order (next request,
// then state), and tells a reporter what happened. Data flows one way:
// source -> reply -> front end -> engine -> commit -> next request ->
// reporter. Only the runner changes session state and records the
// person's decisions.
package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/workspace"
)

// Paths are the folders courier works with. Workspace is where new
// sessions work; Home, if set, no workspace may be or hold (CheckLayout).
type Paths struct {
	Root, Inbox, Outbox, Sessions, Workspace, Home string
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

// Limits bound what a turn reads and shows (0: no limit).
type Limits struct {
	MaxReply                          int64
	ListLimit, ReadLines, TokenBudget int
}

// Commands and Snapshots are the engine's and history's options, which
// each turn completes.
type (
	Commands  = engine.Options
	Snapshots = history.Options
)

// Config is what a runner is built from.
type Config struct {
	Paths Paths
	// WorkspaceGiven: a session on another folder is refused.
	WorkspaceGiven bool
	Limits         Limits
	Commands       Commands
	// FrontEnds are the protocols sessions may speak, the default first.
	FrontEnds []frontend.FrontEnd
	Reporter  Reporter
	// Approver answers questions; nil leaves the session waiting.
	Approver Approver
	// Presets gives the policy of a run's preset; nil when there are none.
	Presets func(name string) (*policy.Policy, error)
	// ProtocolOnce: the whole protocol only in a chat's first request,
	// which Environment has describe the machine.
	ProtocolOnce, Environment bool
	Snapshots                 Snapshots
}

// Runner runs the sessions of one root.
type Runner struct {
	cfg   Config
	store history.Store
	// created is the session whose first request this runner announced.
	created string
}

func New(cfg Config) *Runner {
	if cfg.Reporter == nil {
		cfg.Reporter = discard{}
	}
	return &Runner{cfg: cfg, store: history.Store{Dir: cfg.Paths.Sessions}}
}

func (r *Runner) Paths() Paths { return r.cfg.Paths }

// FrontEnd returns the front end of that name; "" is the default one.
func (r *Runner) FrontEnd(name string) (frontend.FrontEnd, error) {
	if name == "" {
		return r.cfg.FrontEnds[0], nil
	}
	for _, fe := range r.cfg.FrontEnds {
		if fe.Name() == name {
			return fe, nil
		}
	}
	return nil, fmt.Errorf("unknown protocol %q", name)
}

// CreateOptions: the globs the first request packs, the front end ("":
// the default), and whether the first snapshot waits for the first turn.
type CreateOptions struct {
	Includes      []string
	Protocol      string
	SnapshotLater bool
}

// Create starts a session for task with its first request.
func (r *Runner) Create(task string, opts CreateOptions) (string, error) {
	task = strings.TrimSpace(task)
	if task == "" {
		return "", EmptyTaskError{}
	}
	st, err := r.newState(task, opts.Protocol)
	if err != nil {
		return "", err
	}
	st.Includes = opts.Includes
	w, err := r.saveWithRequest(st, true)
	if err != nil {
		return "", err
	}
	r.created = st.SessionID
	r.cfg.Reporter.SessionStarted(SessionStarted{Session: st.SessionID, Task: task})
	r.cfg.Reporter.RequestWritten(w)
	// Read for undo while the person takes the request to the chat.
	if !opts.SnapshotLater {
		r.firstSnapshot(st)
	}
	return st.SessionID, nil
}

// newState is a new session's state in protocol ("": the default) on the
// runner's workspace, under an id no session has.
func (r *Runner) newState(task, protocol string) (*history.State, error) {
	fe, err := r.FrontEnd(protocol)
	if err != nil {
		return nil, err
	}
	ws, err := filepath.Abs(r.cfg.Paths.Workspace)
	if err != nil {
		return nil, &WorkspaceError{Path: r.cfg.Paths.Workspace, Err: err}
	}
	if info, err := os.Stat(ws); err != nil || !info.IsDir() {
		return nil, &WorkspaceError{Path: ws, Err: errors.New("not a folder")}
	}
	now := time.Now().UTC()
	st := &history.State{
		SessionID:        newID(),
		Task:             task,
		SequenceNumber:   1,
		CreatedAt:        now,
		UpdatedAt:        now,
		LastResults:      []command.Result{},
		ReadFileRequests: []history.ReadRequest{},
		Workspace:        ws,
	}
	if fe != r.cfg.FrontEnds[0] {
		st.Protocol = fe.Name()
	}
	for {
		if _, err := os.Stat(r.store.Path(st.SessionID)); errors.Is(err, os.ErrNotExist) {
			return st, nil
		}
		st.SessionID = newID()
	}
}

// firstSnapshot records a new session's workspace, unless another
// process holds it (its first turn then does).
func (r *Runner) firstSnapshot(st *history.State) {
	lock, err := r.store.Lock(st.SessionID, "courier new")
	if err != nil {
		return
	}
	defer lock.Unlock()
	err = r.onHistory(st, func(_ *workspace.Workspace, h *history.History) error { return h.Refresh() })
	if err != nil {
		r.cfg.Reporter.Warning(Warning{Message: fmt.Sprintf("the first snapshot of the workspace failed: %v", err)})
	}
}

// newID is the first 8 hex digits of a random UUID, as the protocol says.
func newID() string { return strings.ReplaceAll(uuid.NewString(), "-", "")[:8] }

// openWorkspace opens a session's folder, if its layout is safe.
func (r *Runner) openWorkspace(st *history.State) (*workspace.Workspace, error) {
	if err := r.cfg.Paths.CheckLayout(st.Workspace); err != nil {
		return nil, fmt.Errorf("session %s: %w", st.SessionID, err)
	}
	ws, err := workspace.Open(st.Workspace)
	if err != nil {
		return nil, &WorkspaceError{Session: st.SessionID, Path: st.Workspace, Err: err}
	}
	return ws, nil
}

// Session is a session held under its lock.
type Session struct {
	r    *Runner
	st   *history.State
	lock *history.Lock
	fe   frontend.FrontEnd
}

// Hold locks and loads a session (or the latest incomplete one); what
// describes the holder.
func (r *Runner) Hold(id, what string) (*Session, error) { return r.hold(id, what, false) }

// HoldLatest is Hold where "" means the latest session, complete or not.
func (r *Runner) HoldLatest(id, what string) (*Session, error) { return r.hold(id, what, true) }

func (r *Runner) hold(id, what string, anyState bool) (*Session, error) {
	if id == "" {
		st, err := r.latest(anyState)
		if err != nil {
			return nil, err
		}
		id = st.SessionID
	}
	// Load first: no lock file for a session that does not exist.
	if _, err := r.store.Load(id); err != nil {
		return nil, err
	}
	lock, err := r.store.Lock(id, what)
	if err != nil {
		return nil, err
	}
	st, err := r.store.Load(id)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	fe, err := r.FrontEnd(st.Protocol)
	if err == nil {
		err = r.cfg.Paths.CheckLayout(st.Workspace)
	}
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	if r.cfg.WorkspaceGiven && filepath.Clean(st.Workspace) != filepath.Clean(r.cfg.Paths.Workspace) {
		lock.Unlock()
		return nil, &OtherWorkspaceError{Session: id, Workspace: st.Workspace, Given: r.cfg.Paths.Workspace}
	}
	s := &Session{r: r, st: st, lock: lock, fe: fe}
	s.closeAgentRuns()
	return s, nil
}

func (s *Session) Release()          { s.lock.Unlock() }
func (s *Session) ID() string        { return s.st.SessionID }
func (s *Session) Folder() string    { return s.r.store.Folder(s.st.SessionID) }
func (s *Session) Workspace() string { return s.st.Workspace }
func (s *Session) Complete() bool    { return s.st.IsComplete }

// latest returns the most recently updated session, or incomplete one
// (a run of 'courier ops' is only ever named by its id).
func (r *Runner) latest(anyState bool) (*history.State, error) {
	if st := r.first(func(st *history.State) bool { return !st.Run && (anyState || !st.IsComplete) }); st != nil {
		return st, nil
	}
	if _, errs := r.store.List(); len(errs) > 0 {
		return nil, errs[0]
	}
	return nil, ErrNoSession
}

// first returns the most recently updated session ok accepts, or nil.
func (r *Runner) first(ok func(*history.State) bool) *history.State {
	all, _ := r.store.List()
	for _, st := range all {
		if ok(st) {
			return st
		}
	}
	return nil
}

// replyAgent is the agent whose run gave the reply, "" for a person's.
func (s *Session) replyAgent(name string) string {
	id, ok := agent.RunOfReply(name)
	if !ok {
		return ""
	}
	a, _ := agent.Runs{SessionDir: s.Folder()}.AgentOf(id)
	return a
}

// closeAgentRuns marks failed, and stops, the agent runs a stopped courier
// left open, so no partial reply is applied (nor one from a run not
// marked completed: a failure here is a warning).
func (s *Session) closeAgentRuns() {
	closed, err := agent.Runs{SessionDir: s.Folder()}.Recover()
	if len(closed) > 0 {
		s.r.cfg.Reporter.Warning(Warning{Message: fmt.Sprintf("%s left running by an earlier courier marked failed: %s",
			human.Count(len(closed), "agent run", ""), strings.Join(closed, ", "))})
	}
	if err != nil {
		s.r.cfg.Reporter.Warning(Warning{Message: fmt.Sprintf("session %s: closing the agent runs an earlier courier left open: %v", s.ID(), err)})
	}
}
