package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
		if p.needsModel && spec.Model == "" {
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
