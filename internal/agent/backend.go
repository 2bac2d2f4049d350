package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/procgroup"
	"github.com/courier-agent/courier/internal/textdist"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// The backends besides the presets.
const (
	NameCommand = "command" // any program: Spec.Command
	NameOpenAI  = "openai"  // an OpenAI-compatible chat-completions endpoint
)

// DefaultMaxReply is the largest reply accepted when Spec.MaxReply is 0,
// and the default of courier's max_reply setting.
const DefaultMaxReply = 20 << 20

// DefaultAPIKeyEnv is the variable the openai backend reads its key from.
const DefaultAPIKeyEnv = "OPENAI_API_KEY"

// Spec describes the agent to build, from the [agent] settings.
type Spec struct {
	Name    string   // a preset, "command" or "openai"; "" with a Command means "command"
	Command []string // for "command": never run through a shell; a relative path is from the current folder
	Model   string   // "" leaves a preset's program its default; ollama and openai need one
	// BaseURL is the openai endpoint's base; "" means OPENAI_BASE_URL, then
	// https://api.openai.com/v1.
	BaseURL   string
	APIKeyEnv string // "" means OPENAI_API_KEY
	// History is the token budget of earlier exchanges the openai backend
	// sends along, oldest dropped first; 0 sends each request alone.
	History  int
	NoStream bool
	MaxReply int64 // a longer reply fails the run; 0 means DefaultMaxReply
	HTTP     HTTPOptions
	Getenv   func(string) string // reads variables after a run's Environment; nil means os.Getenv
}

// Names lists the agent names Spec.Name accepts: the presets, then
// "command" and "openai".
func Names() []string {
	out := make([]string, 0, len(presets)+2)
	for _, p := range presets {
		out = append(out, p.name)
	}
	return append(out, NameCommand, NameOpenAI)
}

// New builds the agent spec describes, or says clearly what is missing.
func New(spec Spec) (Agent, error) {
	if spec.Getenv == nil {
		spec.Getenv = os.Getenv
	}
	spec.MaxReply = cmp.Or(max(spec.MaxReply, 0), DefaultMaxReply)
	name := strings.ToLower(strings.TrimSpace(spec.Name))
	if name == "" && len(spec.Command) > 0 {
		name = NameCommand
	}
	var argv []string
	switch name {
	case "":
		return nil, setupError(errors.New("no agent chosen"),
			"set name in the [agent] table of courier.toml, or use --agent NAME ("+strings.Join(Names(), ", ")+")")
	case NameOpenAI:
		return newOpenAI(spec)
	case NameCommand:
		var err error
		if argv, err = commandLine(spec.Command); err != nil {
			return nil, err
		}
	default:
		i := slices.IndexFunc(presets, func(p preset) bool { return p.name == name })
		if i < 0 {
			hint := ""
			if best := textdist.Nearest(name, Names()); best != "" {
				hint = "; did you mean '" + best + "'?"
			}
			return nil, setupError(fmt.Errorf("unknown agent '%s'%s", spec.Name, hint),
				"the agents are "+strings.Join(Names(), ", "))
		}
		p := presets[i]
		if p.modelFlag == "" && spec.Model == "" {
			return nil, setupError(fmt.Errorf("the %s agent needs a model", name),
				"set model in the [agent] table of courier.toml, or use --model NAME")
		}
		argv = p.argv(spec.Model)
	}
	return &backend{Spec: spec, typ: name, argv: argv}, nil
}

func commandLine(argv []string) ([]string, error) {
	if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
		return nil, setupError(errors.New("the command agent has no command"),
			`set command = ["llm", "-m", "gpt-4o"] in the [agent] table of courier.toml, or use --agent-command 'llm -m gpt-4o'`)
	}
	out := append([]string(nil), argv...)
	if strings.Contains(out[0], "/") && !filepath.IsAbs(out[0]) {
		abs, err := filepath.Abs(out[0])
		if err != nil {
			return nil, fmt.Errorf("agent command %q: %w", out[0], err)
		}
		out[0] = abs
	}
	return out, nil
}

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidEnvName reports whether name can name an environment variable, as
// api_key_env must.
func ValidEnvName(name string) bool { return envNamePattern.MatchString(name) }

// backend is an agent New builds: a program given the request on stdin
// (the command backend and every preset), or an OpenAI-compatible
// endpoint; it also reports progress and details.
type backend struct {
	Spec
	typ     string   // "command", "openai" or the preset's name
	argv    []string // the program, never run through a shell; nil for the endpoint
	baseURL string   // the endpoint's
}

func (b *backend) Type() string { return b.typ }

func (b *backend) Execute(ctx context.Context, runCtx *RunContext) error {
	_, err := execute(ctx, b, runCtx, &reporter{})
	return err
}

// outcome is what a run's record needs besides its error.
type outcome struct {
	exitCode   int    // 128+N for signal N
	signal     string // the signal that killed the program, if one did
	hasExit    bool   // a program ran and ended without courier stopping it
	httpStatus int    // the endpoint's last HTTP status, 0 if none
	tokens     int    // tokens of the reply, when known
}

func execute(ctx context.Context, b *backend, runCtx *RunContext, rep *reporter) (o outcome, err error) {
	defer recoverPanic(&err)
	if err := runCtx.Validate(); err != nil {
		return outcome{}, permanentError{err}
	}
	if b.argv == nil {
		return b.request(ctx, runCtx, rep)
	}
	return b.runCommand(ctx, runCtx, rep)
}

// permanentError marks an error no restart can fix.
type permanentError struct{ error }

func (e permanentError) Unwrap() error   { return e.error }
func (e permanentError) permanent() bool { return true }

func permanent(err error) bool {
	var p interface{ permanent() bool }
	return errors.As(err, &p) && p.permanent()
}

// preset is a coding CLI people already have, run so that it answers one
// request in plain text and exits: the request on stdin, the reply on
// stdout, progress and errors on stderr, and none of its own tools, since
// courier is the one that executes commands.
type preset struct {
	name string
	args []string // the program and its options
	// modelFlag passes a model, before tail; "" makes the model an
	// argument the program cannot do without.
	modelFlag string
	tail      []string
}

func (p preset) argv(model string) []string {
	out := slices.Clone(p.args)
	if p.modelFlag == "" {
		out = append(out, model)
	} else if model != "" {
		out = append(out, p.modelFlag, model)
	}
	return append(out, p.tail...)
}

// presets lists every preset, each written against the documentation it
// names; the tests pin the argument list and stdin of each. What protects
// the person from settings a reply writes into the workspace (hooks,
// helpers, MCP servers: programs the CLI would run outside the sandbox) is
// the fresh folder outside the workspace it runs in (see workFolder);
// where a CLI has a switch that turns project settings off, it is passed
// too.
var presets = []preset{
	// Claude Code (CLI reference, changelog up to 2.1.240): -p without a
	// prompt reads stdin; --tools "" and --strict-mcp-config without
	// --mcp-config leave it no tool to act with; --setting-sources user
	// loads no project or local settings. --tools takes several values, so
	// an option must follow it.
	{name: "claude", args: []string{"claude", "-p", "--output-format", "text", "--tools", "", "--strict-mcp-config", "--no-session-persistence",
		"--setting-sources", "user"}, modelFlag: "--model"},
	// OpenAI Codex CLI (developers.openai.com/codex, codex-cli 0.128):
	// `exec -` reads stdin and prints only the final message on stdout;
	// read-only sandbox and the shell tools off keep it from acting;
	// --ignore-rules loads no execpolicy rules. It has no switch for a
	// project's .codex/config.toml, which it reads only in trusted
	// projects: the fresh folder is none.
	{name: "codex", args: []string{"codex", "exec", "--skip-git-repo-check", "--ephemeral", "--ignore-rules", "--sandbox", "read-only",
		"--color", "never", "-c", "features.shell_tool=false", "-c", "features.unified_exec=false"}, modelFlag: "-m", tail: []string{"-"}},
	// Gemini CLI (cli-reference.md and headless.md of 0.56): -p "" adds
	// nothing to stdin and forces headless mode, where --approval-mode
	// default refuses every tool call needing approval. It has no switch
	// for project settings and refuses untrusted folders headless, so
	// --skip-trust trusts the fresh, empty folder it runs in.
	{name: "gemini", args: []string{"gemini", "--skip-trust", "--approval-mode", "default", "--output-format", "text"},
		modelFlag: "-m", tail: []string{"-p", ""}},
	// llm (llm.datasette.io, 0.32): `llm prompt` sends stdin; --no-log
	// keeps courier's requests out of its database; no tools without -T.
	{name: "llm", args: []string{"llm", "prompt", "--no-log"}, modelFlag: "-m"},
	// Ollama (cmd/cmd.go at v0.33.0): `run` reads all of a piped stdin;
	// --nowordwrap keeps long lines of code whole; --hidethinking keeps a
	// thinking model's reasoning out of the reply.
	{name: "ollama", args: []string{"ollama", "run", "--nowordwrap", "--hidethinking"}},
}

const redacted = "[redacted]"

func redactString(s string, secrets []string) string {
	for _, k := range secrets {
		s = strings.ReplaceAll(s, k, redacted)
	}
	return s
}

// redactError returns err with the secrets removed from its text, its
// chain kept.
func redactError(err error, secrets []string) error {
	if err == nil || redactString(err.Error(), secrets) == err.Error() {
		return err
	}
	return &redactedError{msg: redactString(err.Error(), secrets), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactor writes to w with the secrets replaced, holding back a tail that
// could begin a secret split across writes; Close writes it.
type redactor struct {
	w       io.Writer
	secrets []string
	hold    string
}

func newRedactor(w io.Writer, secrets []string) *redactor { return &redactor{w: w, secrets: secrets} }

func (r *redactor) Write(p []byte) (int, error) {
	buf := redactString(r.hold+string(p), r.secrets)
	keep := 0 // the longest tail of buf that begins a secret
	for _, s := range r.secrets {
		for n := min(len(s)-1, len(buf)); n > keep; n-- {
			if strings.HasSuffix(buf, s[:n]) {
				keep = n
				break
			}
		}
	}
	if _, err := io.WriteString(r.w, buf[:len(buf)-keep]); err != nil {
		return 0, err
	}
	r.hold = buf[len(buf)-keep:]
	return len(p), nil
}

func (r *redactor) Close() error {
	_, err := io.WriteString(r.w, r.hold)
	r.hold = ""
	return err
}

// errReplyTooLarge stops a runaway agent before it fills the disk.
var errReplyTooLarge = errors.New("reply too large")

// meter counts what an agent writes to one of its outputs; past limit the
// reply fails the run, the rest of stderr is dropped.
type meter struct {
	w        io.Writer
	n, limit int64
	drop     bool        // past the limit: discard instead of failing
	exceeded func()      // called once when a failing limit is passed
	onWrite  func(int64) // called with the running total after each write
	failed   bool
}

func (m *meter) Write(p []byte) (int, error) {
	if m.failed {
		return 0, errReplyTooLarge
	}
	room := m.limit - m.n
	m.n += int64(len(p))
	if m.onWrite != nil {
		m.onWrite(m.n)
	}
	if _, err := m.w.Write(p[:min(max(room, 0), int64(len(p)))]); err != nil {
		return 0, err
	}
	if int64(len(p)) <= room || m.drop {
		return len(p), nil
	}
	m.failed = true
	if m.exceeded != nil {
		m.exceeded()
	}
	return 0, fmt.Errorf("%w: more than %d bytes", errReplyTooLarge, m.limit)
}

// SplitCommand splits --agent-command 'llm -m gpt-4o' into words as a
// POSIX shell would. No shell ever runs it, so anything a shell would do
// beyond splitting words (pipes, redirections, variables, globs...) is
// refused, saying so.
func SplitCommand(line string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
	switch {
	case err != nil:
		return nil, fmt.Errorf("agent command %q: %w", line, err)
	case len(f.Stmts) == 0:
		return nil, errors.New("the agent command is empty")
	case len(f.Stmts) > 1:
		return nil, notShell(line, "several commands (;, & or a new line)")
	}
	what := ""
	syntax.Walk(f.Stmts[0], func(n syntax.Node) bool {
		if q, ok := n.(*syntax.DblQuoted); ok { // its text is literal, the rest is not
			for _, p := range q.Parts {
				if _, lit := p.(*syntax.Lit); !lit {
					what = cmp.Or(what, shellFeature(p))
				}
			}
			return false
		}
		what = cmp.Or(what, shellFeature(n))
		return what == ""
	})
	if what != "" {
		return nil, notShell(line, what)
	}
	var words []string
	for _, w := range f.Stmts[0].Cmd.(*syntax.CallExpr).Args {
		fields, err := expand.Fields(nil, w)
		if err != nil || len(fields) != 1 {
			return nil, notShell(line, "a brace expansion ({a,b}); quote it to pass it as is")
		}
		words = append(words, fields[0])
	}
	if words[0] == "" {
		return nil, errors.New("the agent command starts with an empty word")
	}
	return words, nil
}

func notShell(line, what string) error {
	return fmt.Errorf("agent command %q has %s, but courier runs the program directly, never through a shell; write a script and name it instead", line, what)
}

// shellFeature names what a shell would do for node n beyond splitting
// words, or is "".
func shellFeature(n syntax.Node) string {
	switch n := n.(type) {
	case *syntax.Stmt:
		switch {
		case n.Background:
			return "a background job (&)"
		case n.Negated:
			return "a negation (!)"
		case len(n.Redirs) > 0:
			return "a redirection (<, > or a here-document)"
		}
	case *syntax.BinaryCmd:
		if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
			return "a pipe (|)"
		}
		return "a command list (&& or ||)"
	case *syntax.Subshell, *syntax.Block:
		return "a group of commands"
	case *syntax.CallExpr, *syntax.Word, *syntax.Comment:
	case syntax.Command:
		return "shell syntax"
	case *syntax.Assign:
		return "a variable assignment (set it in the environment instead)"
	case *syntax.Lit:
		if strings.ContainsAny(n.Value, "*?[") {
			return "a glob pattern (*, ? or [); quote it to pass it as is"
		}
		if strings.HasPrefix(n.Value, "~") {
			return "a ~ (write the full path)"
		}
	case *syntax.SglQuoted:
		if n.Dollar {
			return "a $'...' string"
		}
	case *syntax.ParamExp:
		return "a variable ($NAME)"
	case *syntax.CmdSubst:
		return "a command substitution ($(...) or `...`)"
	case *syntax.ArithmExp:
		return "an arithmetic expansion ($((...)))"
	case *syntax.ProcSubst:
		return "a process substitution"
	case *syntax.ExtGlob:
		return "a glob pattern"
	}
	return ""
}

// stderrLimit caps what courier keeps of an agent's stderr, only for the
// person to read.
const stderrLimit = 4 << 20

// runCommand runs the program, request on stdin, reply on stdout.
func (c *backend) runCommand(ctx context.Context, runCtx *RunContext, rep *reporter) (outcome, error) {
	stdoutFile, stderrFile, err := createOutputs(runCtx)
	if err != nil {
		return outcome{}, err
	}
	defer stdoutFile.Close()
	defer stderrFile.Close()
	secrets := secretsOf(runCtx, c.Getenv)
	env := os.Environ() // with the run's variables after it: os/exec and lookPath take the last
	for name, v := range runCtx.Environment {
		env = append(env, name+"="+v)
	}
	path, err := lookPath(c.argv[0], runCtx.WorkingDir, env)
	if err != nil {
		return outcome{}, err
	}

	progCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stdout := newRedactor(stdoutFile, secrets)
	stderr := newRedactor(stderrFile, secrets)
	cmd := exec.CommandContext(progCtx, path)
	cmd.Args, cmd.Dir, cmd.Env, cmd.Stdin = c.argv, runCtx.WorkingDir, env, strings.NewReader(runCtx.Prompt)
	cmd.Stdout = &meter{w: stdout, limit: c.MaxReply, exceeded: func() { cancel(errReplyTooLarge) }, onWrite: rep.bytes.Store}
	cmd.Stderr = &meter{w: stderr, limit: stderrLimit, drop: true}
	o, runErr := runProgram(progCtx, cmd, rep)
	// What the redactors held back goes into the files before the sync.
	_ = stdout.Close()
	_ = stderr.Close()
	rep.flush()
	var exitErr *exec.ExitError
	switch {
	case errors.Is(context.Cause(progCtx), errReplyTooLarge) && ctx.Err() == nil:
		return o, fmt.Errorf("the reply of %s passed %s; courier stopped it", c.typ, human.ExactBytes(c.MaxReply))
	case errors.As(runErr, &exitErr):
		last, _ := os.ReadFile(runCtx.StderrPath)
		return o, &ExitError{Agent: c.typ, Code: o.exitCode, Signal: o.signal, Detail: lastLine(string(last)), Err: runErr}
	case runErr != nil:
		return o, runErr
	}
	return o, syncReply(stdoutFile)
}

func createOutputs(runCtx *RunContext) (stdout, stderr *os.File, err error) {
	stdout, err = os.OpenFile(runCtx.StdoutPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("create stdout file: %w", err)
	}
	stderr, err = os.OpenFile(runCtx.StderrPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		stdout.Close()
		return nil, nil, fmt.Errorf("create stderr file: %w", err)
	}
	return stdout, stderr, nil
}

// syncReply makes the reply durable before its run is marked completed.
func syncReply(f *os.File) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("save the reply: %w", err)
	}
	return nil
}

// killGrace is how long a stopped agent gets between SIGTERM and SIGKILL,
// and how long courier waits for output pipes a leftover process holds.
const killGrace = 2 * time.Second

// runProgram runs cmd in a session of its own (no terminal to prompt on,
// one process group to stop) and waits for it, ticking rep. When ctx is
// done the group gets SIGTERM, the leader SIGKILL after killGrace; what
// the program leaves running is killed. The outcome has hasExit when the
// program ended by itself; a signal N gives code 128+N.
func runProgram(ctx context.Context, cmd *exec.Cmd, rep *reporter) (outcome, error) {
	if err := ctx.Err(); err != nil {
		return outcome{}, fmt.Errorf("agent not started: %w", context.Cause(ctx))
	}
	cmd.SysProcAttr = procgroup.Attr()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
	if err := cmd.Start(); err != nil {
		return outcome{}, fmt.Errorf("start %s: %w", cmd.Args[0], err)
	}
	pgid := cmd.Process.Pid // Setsid makes it the leader of its group
	defer procgroup.Signal(pgid, syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	rep.processStarted(pgid)
	ticker := time.NewTicker(progressEvery)
	defer ticker.Stop()
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-ticker.C:
			rep.tick()
		}
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return outcome{}, fmt.Errorf("%s stopped: %w", filepath.Base(cmd.Args[0]), context.Cause(ctx))
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: it succeeded, but a process it started held its
		// output open.
		return outcome{hasExit: true}, nil
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			name := procgroup.SignalName(ws.Signal())
			if name == "" {
				name = fmt.Sprintf("signal %d", int(ws.Signal()))
			}
			return outcome{hasExit: true, exitCode: 128 + int(ws.Signal()), signal: name}, exitErr
		}
		return outcome{hasExit: true, exitCode: exitErr.ExitCode()}, exitErr
	}
	return outcome{}, fmt.Errorf("wait for %s: %w", cmd.Args[0], err)
}

// lookPath finds the program: a name with a slash is a path (from dir), a
// bare name is looked up in the agent's PATH, which may differ from
// courier's.
func lookPath(name, dir string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", permanentError{fmt.Errorf("agent program %q not found: %w", name, err)}
		}
		return p, nil
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, d := range filepath.SplitList(pathVar) {
		// A relative entry would depend on the agent's folder; os/exec
		// refuses such matches too.
		if p := filepath.Join(d, name); filepath.IsAbs(d) && executable(p) == nil {
			return p, nil
		}
	}
	return "", permanentError{fmt.Errorf("agent program %q not found: not on PATH", name)}
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a folder", p)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}
