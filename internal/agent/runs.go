package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// The files of a run folder, as the protocol names them.
const (
	PromptFile  = "prompt.md"     // the request text
	StdoutFile  = "stdout"        // the agent's stdout: the reply once the run completed
	StderrFile  = "stderr"        // the agent's stderr and courier's notes on the run
	RunInfoFile = "run-info.json" // the run's record (RunInfo)
)

const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// RunInfo is a run's record, run-info.json. It never holds the
// environment, so no key reaches a file.
type RunInfo struct {
	RunID         string     `json:"runId"`
	PreviousRunID string     `json:"previousRunId,omitempty"`
	Agent         string     `json:"agent"`
	Model         string     `json:"model,omitempty"`
	ProjectID     string     `json:"projectId,omitempty"`
	TaskID        string     `json:"taskId,omitempty"`
	Status        string     `json:"status"`
	StartTime     time.Time  `json:"startTime"`
	EndTime       *time.Time `json:"endTime,omitempty"`
	ExitCode      *int       `json:"exitCode,omitempty"` // 128+N for signal N; absent for HTTP and a program courier stopped
	Signal        string     `json:"signal,omitempty"`   // the signal that killed the program ("SIGKILL")
	HTTPStatus    int        `json:"httpStatus,omitempty"`
	StdoutBytes   int64      `json:"stdoutBytes"`
	StderrBytes   int64      `json:"stderrBytes"`
	Tokens        int        `json:"tokens,omitempty"`
	// PID and PIDStart (its start time) name the running agent program,
	// for a courier restarted after a crash to stop it and no other.
	PID      int    `json:"pid,omitempty"`
	PIDStart uint64 `json:"pidStart,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Runs is the runs folder of one session: <session folder>/runs/<RunID>/.
// The caller holds the session's lock.
type Runs struct {
	SessionDir string // the session's folder, TASK_FOLDER for the agent
	// TimeBudget bounds the time agents work on the session, over all its
	// runs (see spent); 0 means none. A run that would pass it is stopped
	// with a *BudgetError, and none starts once it is spent.
	TimeBudget time.Duration
}

// BudgetError is the session's time budget for agents spent.
type BudgetError struct {
	Budget time.Duration
	Spent  time.Duration // what the runs have taken, at least Budget
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the agent's time on this session reached its budget of %s", e.Budget)
}

func (e *BudgetError) permanent() bool { return true }

var errBudgetSpent = errors.New("the time budget ran out")

// spent adds up the time of every run that ended, from the run folders,
// so that it counts every courier's runs, crashed ones too (see Recover).
func (r Runs) spent() (time.Duration, error) {
	ids, err := r.ids()
	var total time.Duration
	for _, id := range ids {
		info, err := readInfo(filepath.Join(r.Dir(), id))
		if err == nil && info.EndTime != nil && !info.StartTime.IsZero() {
			total += max(info.EndTime.Sub(info.StartTime), 0)
		}
	}
	return total, err
}

// Dir is the folder holding the runs.
func (r Runs) Dir() string { return filepath.Join(r.SessionDir, "runs") }

// Request is one request to send to an agent.
type Request struct {
	Prompt string // the request text (the outbox)
	// Workspace is the folder the agent must not see: it runs elsewhere
	// and no variable of its environment names a path in it.
	Workspace string
	ProjectID string // the workspace's folder name
	TaskID    string // the session id
	// Environment is set over the process environment; the run's own
	// variables (TASK_FOLDER, RUN_FOLDER, JRUN_*) win over it.
	Environment map[string]string
	// Observer, if set, hears about the run on the goroutine that sends
	// the request (its panic fails the run); it should return quickly.
	Observer func(Event)
}

// Reply is the reply of a completed run.
type Reply struct {
	RunID string
	Text  string // the run's stdout: for a program what it printed, for HTTP the assistant message
	Path  string // the run's stdout file
	Info  RunInfo
}

// Send runs one request: it creates the run folder (prompt.md, run-info.json
// as running), executes the agent into it, records how the run ended and
// returns the reply, only once run-info.json says completed: a crash leaves
// a completed run with its whole reply or one Recover marks failed. An
// empty reply fails the run.
func (r Runs) Send(ctx context.Context, a Agent, req Request) (Reply, error) {
	if err := ctx.Err(); err != nil {
		return Reply{}, fmt.Errorf("request not sent: %w", context.Cause(ctx))
	}
	model := ""
	if b, ok := a.(*backend); ok {
		model = b.Model
	}
	var spent time.Duration
	if r.TimeBudget > 0 {
		var err error
		if spent, err = r.spent(); err != nil {
			return Reply{}, err
		}
		if spent >= r.TimeBudget {
			return Reply{}, &BudgetError{Budget: r.TimeBudget, Spent: spent}
		}
	}
	work, err := workFolder(req.Workspace)
	if err != nil {
		return Reply{}, err
	}
	defer os.RemoveAll(work)
	dir, info, err := r.create(a.Type(), model, req)
	if err != nil {
		return Reply{}, err
	}
	parent := ctx
	if r.TimeBudget > 0 {
		// From the recorded start: a run stopped here took its whole share.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, info.StartTime.Add(r.TimeBudget-spent), errBudgetSpent)
		defer cancel()
	}
	runCtx := r.runContext(dir, work, info.RunID, req)
	rep := newReporter(req.Observer, info.RunID, a.Type(), model)
	rep.started = func(pid int) {
		info.PID = pid
		info.PIDStart, _ = processStart(pid)
		_ = writeInfo(dir, info) // without it, a crash leaves the program to end by itself
	}

	var o outcome
	runErr := rep.safeEvent(Event{Kind: EventStart})
	if runErr == nil {
		o, runErr = runAgent(ctx, a, runCtx, rep)
	}
	if runErr != nil && parent.Err() == nil && errors.Is(context.Cause(ctx), errBudgetSpent) {
		runErr = &BudgetError{Budget: r.TimeBudget, Spent: max(spent+time.Since(info.StartTime), r.TimeBudget)}
	}
	var text string
	if runErr == nil {
		text, runErr = readReply(runCtx.StdoutPath, a.Type())
	}
	runErr = redactError(runErr, secretsOf(runCtx, os.Getenv))
	info = finish(info, dir, o, runErr)
	if err := writeInfo(dir, info); err != nil {
		return Reply{}, fmt.Errorf("record run %s: %w", info.RunID, err)
	}
	endErr := rep.safeEvent(Event{Kind: EventEnd, Status: info.Status, Err: runErr})
	if runErr != nil {
		return Reply{RunID: info.RunID, Info: info}, fmt.Errorf("run %s of %s failed: %w", info.RunID, a.Type(), runErr)
	}
	reply := Reply{RunID: info.RunID, Text: text, Path: runCtx.StdoutPath, Info: info}
	if endErr != nil {
		return reply, fmt.Errorf("run %s completed, then: %w", info.RunID, endErr)
	}
	return reply, nil
}

// runAgent runs a backend of New with progress, any other Agent with its
// panic recovered.
func runAgent(ctx context.Context, a Agent, runCtx *RunContext, rep *reporter) (o outcome, err error) {
	if b, ok := a.(*backend); ok {
		return execute(ctx, b, runCtx, rep)
	}
	defer recoverPanic(&err)
	err = a.Execute(ctx, runCtx)
	var ee *ExitError
	switch {
	case err == nil:
		o = outcome{hasExit: true}
	case errors.As(err, &ee):
		o = outcome{hasExit: true, exitCode: ee.Code, signal: ee.Signal}
	}
	return o, err
}

// create makes the run's folder, its id after the last run's even if the
// clock went back, with its prompt and its record as running.
func (r Runs) create(agentType, model string, req Request) (string, RunInfo, error) {
	if err := os.MkdirAll(r.Dir(), 0o755); err != nil {
		return "", RunInfo{}, fmt.Errorf("create the runs folder: %w", err)
	}
	ids, err := r.ids()
	if err != nil {
		return "", RunInfo{}, err
	}
	previous, t := "", time.Now()
	if len(ids) > 0 {
		previous = ids[len(ids)-1]
		if prev := runTime(previous); !t.After(prev) {
			t = prev.Add(time.Millisecond)
		}
	}
	id := NewRunID(t, os.Getpid())
	dir := filepath.Join(r.Dir(), id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", RunInfo{}, fmt.Errorf("create the run folder: %w", err)
	}
	if err := atomicfile.SyncDir(r.Dir()); err != nil {
		return "", RunInfo{}, err
	}
	info := RunInfo{
		RunID: id, PreviousRunID: previous, Agent: agentType, Model: model,
		ProjectID: req.ProjectID, TaskID: req.TaskID, Status: StatusRunning, StartTime: time.Now().UTC(),
	}
	if err := atomicfile.Write(filepath.Join(dir, PromptFile), []byte(req.Prompt), 0o644); err != nil {
		return "", RunInfo{}, err
	}
	return dir, info, writeInfo(dir, info)
}

// runTime reads the start time in a valid id.
func runTime(id string) time.Time {
	t, _ := time.Parse("20060102-150405.000", id[:15]+"."+id[15:18])
	return t
}

// runContext is the protocol's view of the run, working in work. The
// environment names no workspace path; TASK_FOLDER and RUN_FOLDER are
// courier's folders, which no reply can write.
func (r Runs) runContext(dir, work, id string, req Request) *RunContext {
	env := hideWorkspace(os.Environ(), req.Workspace)
	maps.Copy(env, req.Environment)
	session, _ := filepath.Abs(r.SessionDir)
	runDir, _ := filepath.Abs(dir)
	maps.Copy(env, map[string]string{"PWD": work, EnvTaskFolder: session, EnvRunFolder: runDir,
		EnvProjectID: req.ProjectID, EnvTaskID: req.TaskID, EnvRunID: id})
	return &RunContext{
		RunID: id, ProjectID: req.ProjectID, TaskID: req.TaskID, Prompt: req.Prompt,
		WorkingDir: work,
		StdoutPath: filepath.Join(runDir, StdoutFile), StderrPath: filepath.Join(runDir, StderrFile),
		Environment: env,
	}
}

// readReply reads the reply back; the backends stop one past its limit,
// which the session checks again.
func readReply(path, agentType string) (string, error) {
	data, err := os.ReadFile(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("read the reply: %w", err)
	case strings.TrimSpace(string(data)) == "":
		return "", fmt.Errorf("%s finished without writing a reply", agentType)
	}
	return string(data), nil
}

func finish(info RunInfo, dir string, o outcome, err error) RunInfo {
	info.EndTime, info.Status = new(time.Now().UTC()), StatusCompleted
	if err != nil {
		info.Status = StatusFailed
		info.Error = cleanLine(err.Error())
	}
	if o.hasExit {
		info.ExitCode = &o.exitCode
		info.Signal = o.signal
	}
	info.HTTPStatus, info.Tokens = o.httpStatus, o.tokens
	info.StdoutBytes, info.StderrBytes = fileSize(filepath.Join(dir, StdoutFile)), fileSize(filepath.Join(dir, StderrFile))
	info.PID, info.PIDStart = 0, 0
	return info
}

func fileSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return 0
}

func writeInfo(dir string, info RunInfo) error {
	data, _ := json.MarshalIndent(info, "", "  ") // cannot fail
	return atomicfile.Write(filepath.Join(dir, RunInfoFile), append(data, '\n'), 0o644)
}

func readInfo(dir string) (RunInfo, error) {
	var info RunInfo
	data, err := os.ReadFile(filepath.Join(dir, RunInfoFile))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("%s: %w", filepath.Join(dir, RunInfoFile), err)
	}
	return info, nil
}

const replyPrefix = "run "

// ReplyName names the reply a run gave, as sessions record it.
func ReplyName(runID string) string { return replyPrefix + runID }

// RunOfReply returns the run a reply named name came from.
func RunOfReply(name string) (string, bool) {
	id, ok := strings.CutPrefix(name, replyPrefix)
	return id, ok && ValidRunID(id)
}

// AgentOf returns the agent of the run named runID, from its record.
func (r Runs) AgentOf(runID string) (string, bool) {
	if !ValidRunID(runID) {
		return "", false
	}
	info, err := readInfo(filepath.Join(r.Dir(), runID))
	return info.Agent, err == nil && info.Agent != ""
}

// ids lists the run ids in the order the runs started.
func (r Runs) ids() ([]string, error) {
	entries, err := os.ReadDir(r.Dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the runs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && ValidRunID(e.Name()) {
			ids = append(ids, e.Name()) // ReadDir sorts them
		}
	}
	return ids, nil
}

// Recover marks failed the runs a stopped courier left running (and those
// without a readable record), so that no partial stdout is taken for a
// reply, stops their programs, and returns their ids.
func (r Runs) Recover() ([]string, error) {
	ids, err := r.ids()
	if err != nil {
		return nil, err
	}
	var closed []string
	for _, id := range ids {
		dir := filepath.Join(r.Dir(), id)
		if err := atomicfile.CleanTemps(dir); err != nil {
			return closed, err
		}
		info, err := readInfo(dir)
		switch {
		case err != nil:
			info = RunInfo{RunID: id, Error: "courier stopped before recording the run"}
			info.StartTime = runTime(id)
		case info.Status != StatusRunning:
			continue
		}
		wasRunning := stopLeftover(info.PID, info.PIDStart)
		info = finish(info, dir, outcome{}, errors.New(cmp.Or(info.Error, "courier stopped during the run, before the reply was complete")))
		if !wasRunning {
			// It ended with courier: its time counts to its files' last change.
			last := info.StartTime
			for _, name := range []string{StdoutFile, StderrFile, RunInfoFile} {
				if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.ModTime().After(last) {
					last = fi.ModTime()
				}
			}
			info.EndTime = new(last.UTC())
		}
		if err := writeInfo(dir, info); err != nil {
			return closed, err
		}
		closed = append(closed, id)
	}
	return closed, nil
}

const (
	DefaultMaxRestarts  = 3
	DefaultRestartPause = 5 * time.Second
)

// RestartPolicy is the protocol's restart loop for one request.
type RestartPolicy struct {
	MaxRestarts int           // runs that may fail before courier gives up; 1 makes one attempt
	Pause       time.Duration // between a failed run and the next
}

// SendWithRestarts sends a request with the protocol's restart loop: after
// a failed run and the pause, a new run (whose record names the failed one
// as previous), until one completes, MaxRestarts have failed, ctx is done
// or a failure no restart can fix happens. Each restart is an EventRestart
// naming the failed run; the error is the last run's.
func (r Runs) SendWithRestarts(ctx context.Context, a Agent, req Request, p RestartPolicy) (Reply, error) {
	p.MaxRestarts = cmp.Or(max(p.MaxRestarts, 0), DefaultMaxRestarts)
	p.Pause = cmp.Or(max(p.Pause, 0), DefaultRestartPause)
	for n := 1; ; n++ {
		reply, err := r.Send(ctx, a, req)
		if err == nil || ctx.Err() != nil || permanent(err) {
			return reply, err
		}
		if n >= p.MaxRestarts {
			return reply, fmt.Errorf("%d runs failed, the last: %w", n, err)
		}
		rep := newReporter(req.Observer, reply.RunID, a.Type(), reply.Info.Model)
		if oerr := rep.safeEvent(Event{Kind: EventRestart, Attempt: n + 1, Wait: p.Pause, Err: err}); oerr != nil {
			return reply, oerr
		}
		if err := sleep(ctx, p.Pause); err != nil {
			return reply, fmt.Errorf("stopped before restarting: %w", err)
		}
	}
}

// The variables the protocol sets for every run.
const (
	EnvTaskFolder = "TASK_FOLDER"     // the session folder
	EnvRunFolder  = "RUN_FOLDER"      // the run's folder
	EnvProjectID  = "JRUN_PROJECT_ID" // RunContext.ProjectID
	EnvTaskID     = "JRUN_TASK_ID"    // RunContext.TaskID
	EnvRunID      = "JRUN_ID"         // RunContext.RunID
)

// keyVariables are the protocol's API key variables: courier redacts
// their values from everything it writes about a run.
var keyVariables = []string{
	"OPENAI_API_KEY",
	"ANTHROPIC_API_KEY",
	"GEMINI_API_KEY",
	"GOOGLE_API_KEY", // the Gemini CLI's other name for its key
	"PERPLEXITY_API_KEY",
	"XAI_API_KEY",
}

// lookupEnv reads a variable as the agent sees it.
func lookupEnv(runCtx *RunContext, getenv func(string) string, name string) string {
	if v, ok := runCtx.Environment[name]; ok {
		return v
	}
	return getenv(name)
}

// minSecretLen is the shortest value treated as a key: local servers take
// any key, and redacting "x" or "ollama" would mangle replies.
const minSecretLen = 8

// secretsOf returns the values of the key variables and of extra.
func secretsOf(runCtx *RunContext, getenv func(string) string, extra ...string) []string {
	var out []string
	for _, name := range slices.Concat(keyVariables, extra) {
		if v := lookupEnv(runCtx, getenv, name); len(v) >= minSecretLen && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// workFolder makes the empty, private folder an agent program runs in,
// ~/.cache/courier/agents/run-*, removed after the run. Coding CLIs run
// programs their settings name (.claude/settings.json, .gemini/.env...),
// read from their folder and those above, which a reply can write in the
// workspace; every user can write /tmp/.gemini/.env; the sandbox lets no
// reply write here.
func workFolder(workspace string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", permanentError{fmt.Errorf("no folder for the agent to run in: %w", err)}
	}
	base := filepath.Join(cache, "courier", "agents")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("create the agents' folder: %w", err)
	}
	dir, err := os.MkdirTemp(base, "run-")
	if err != nil {
		return "", fmt.Errorf("create the agent's folder: %w", err)
	}
	if ws, err := os.Stat(workspace); err == nil && within(dir, ws) {
		os.Remove(dir)
		return "", permanentError{setupError(fmt.Errorf("the agents' folder %s is inside the workspace, where a reply could plant settings the agent program would act on", base),
			"set XDG_CACHE_HOME to a folder outside the workspace")}
	}
	return dir, nil
}

// hideWorkspace returns what to set over environ so that no variable
// names a path in the workspace (a PATH entry where a reply could put a
// program named claude, PWD, VIRTUAL_ENV): such paths are taken out of
// their variable's list.
func hideWorkspace(environ []string, workspace string) map[string]string {
	out := map[string]string{}
	ws, err := os.Stat(workspace)
	if err != nil {
		return out
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		parts := filepath.SplitList(value)
		kept := slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return filepath.IsAbs(p) && within(p, ws) })
		if len(kept) < len(parts) {
			out[name] = strings.Join(kept, string(os.PathListSeparator))
		}
	}
	return out
}

// within reports whether path is dir or inside it, symlinks followed.
func within(path string, dir fs.FileInfo) bool {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if info, err := os.Stat(p); err == nil && os.SameFile(info, dir) {
			return true
		}
		if filepath.Dir(p) == p {
			return false
		}
	}
}
