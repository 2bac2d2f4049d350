package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/courier-agent/courier/internal/textdist"
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

// Spec describes the agent to build; courier fills it from the [agent]
// settings.
type Spec struct {
	// Name is a preset ("claude", "codex", "gemini", "llm", "ollama"),
	// "command" or "openai". Empty with a Command means "command".
	Name string
	// Command is the program and its arguments for "command", never run
	// through a shell; a relative path is taken from the current folder.
	Command []string
	// Model is passed to the preset or sent to the endpoint; "" leaves a
	// preset's program its default. ollama and openai need one.
	Model string
	// BaseURL is the openai endpoint's base, like http://localhost:11434/v1;
	// "" means OPENAI_BASE_URL, then https://api.openai.com/v1.
	BaseURL   string
	APIKeyEnv string // the variable holding the openai key; "" means OPENAI_API_KEY
	// History is the token budget of earlier requests and replies the
	// openai backend sends along, oldest dropped first; 0 sends each
	// request alone (it is complete in itself).
	History  int
	NoStream bool  // ask the openai endpoint for the whole reply at once
	MaxReply int64 // a longer reply fails the run and stops the agent; 0 means DefaultMaxReply
	HTTP     HTTPOptions
	// Getenv reads OPENAI_BASE_URL and the keys after a run's Environment;
	// nil means os.Getenv.
	Getenv func(string) string
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
	getenv := spec.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	maxReply := cmp.Or(max(spec.MaxReply, 0), DefaultMaxReply)
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
		return newOpenAI(spec, getenv, maxReply)
	case NameCommand:
		var err error
		if argv, err = commandLine(spec.Command); err != nil {
			return nil, err
		}
	default:
		p, ok := findPreset(name)
		if !ok {
			return nil, setupError(fmt.Errorf("unknown agent '%s'%s", spec.Name, nameSuggestion(name)),
				"the agents are "+strings.Join(Names(), ", "))
		}
		if p.needsModel && spec.Model == "" {
			return nil, setupError(fmt.Errorf("the %s agent needs a model", name),
				"set model in the [agent] table of courier.toml, or use --model NAME")
		}
		argv = p.argv(spec.Model)
	}
	return &commandAgent{typ: name, argv: argv, modelID: spec.Model, maxReply: maxReply, getenv: getenv}, nil
}

// commandLine checks the command backend's argument list.
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

// nameSuggestion completes an unknown-agent error with a near name.
func nameSuggestion(name string) string {
	best := textdist.Nearest(name, Names())
	if best == "" {
		return ""
	}
	return "; did you mean '" + best + "'?"
}

// envNamePattern is the shape of an environment variable's name.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidEnvName reports whether name can name an environment variable, as
// api_key_env must.
func ValidEnvName(name string) bool { return envNamePattern.MatchString(name) }

// backend is what the agents New builds add to Agent for Runs: their
// model, and progress and details of the run.
type backend interface {
	Agent
	model() string
	run(ctx context.Context, runCtx *RunContext, rep *reporter) (outcome, error)
}

// outcome is what a run's record needs besides its error.
type outcome struct {
	exitCode   int    // 128+N for signal N
	signal     string // the signal that killed the program, if one did
	hasExit    bool   // a program ran and ended without courier stopping it
	httpStatus int    // the endpoint's last HTTP status, 0 if none
	tokens     int    // tokens of the reply, when known
}

// execute is Execute of every backend: it validates the run context and
// turns a panic into an error, then runs. rep is never nil.
func execute(ctx context.Context, b backend, runCtx *RunContext, rep *reporter) (o outcome, err error) {
	defer recoverPanic(&err)
	if err := runCtx.Validate(); err != nil {
		return outcome{}, permanentError{err}
	}
	return b.run(ctx, runCtx, rep)
}

// permanentError marks an error no restart can fix.
type permanentError struct{ error }

func (e permanentError) Unwrap() error   { return e.error }
func (e permanentError) permanent() bool { return true }

// permanent reports whether err is a failure no restart can fix (a
// missing program, a refused key, an unknown model).
func permanent(err error) bool {
	var p interface{ permanent() bool }
	return errors.As(err, &p) && p.permanent()
}
