// Package config holds courier's settings: built-in defaults, then the
// courier.toml file, then COURIER_* environment variables, then
// command-line flags, each overriding the one before, with the source of
// every effective value kept so that it can be shown.
package config

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/policy"
)

// Source says where a setting's value came from: "default",
// "courier.toml:7", "env COURIER_COPY", "env NO_COLOR" or
// "flag --max-output".
type Source string

// SourceDefault marks a value nothing overrode.
const SourceDefault Source = "default"

// FileSource is the source of a value set on a line of a settings file.
func FileSource(path string, line int) Source {
	if line <= 0 {
		return Source(path)
	}
	return Source(path + ":" + strconv.Itoa(line))
}

// EnvSource is the source of a value set by an environment variable.
func EnvSource(name string) Source { return Source("env " + name) }

// FlagSource is the source of a value set by a command-line flag, given by
// its name without dashes.
func FlagSource(name string) Source { return Source("flag --" + name) }

// The values of Config.Color.
const (
	ColorAuto   = "auto"   // colour when writing to a terminal
	ColorAlways = "always" // colour even into files and pipes
	ColorNever  = "never"  // no colour
)

// The values of Config.Sandbox.
const (
	SandboxAuto   = "auto"   // every layer the kernel allows, saying which are missing
	SandboxStrict = "strict" // refuse to run commands when a layer is missing
	SandboxOff    = "off"    // never confine commands
)

// The values of Config.Protocol.
const (
	ProtocolEvery = "every" // the full protocol text in every request
	ProtocolFirst = "first" // in the first request of a chat; a reminder after
)

// The values of Config.Home: what commands see of the person's home folder.
const (
	HomePrivate  = "private"  // empty but for the tool folders builds need, read-only
	HomeReadable = "readable" // all of it read-only but the places that hold credentials
)

// Config is the effective settings: Defaults, overridden by the Load and
// Set methods, which record each source. The settings table says what
// each field means.
type Config struct {
	CommandTimeout  time.Duration
	MaxOutput       int
	Copy            bool
	TokenBudget     int
	MaxReply        int64
	Poll            bool
	Settle          time.Duration
	Color           string
	Sandbox         string
	Network         bool
	Home            string
	ReadOnly        []string
	MaxProcesses    int
	MaxMemory       int64
	KeepEnv         []string
	Yes             bool
	ListLimit       int
	ReadLines       int
	Protocol        string
	Clipboard       bool
	Environment     bool
	Snapshots       bool
	SnapshotBudget  int64
	SnapshotLimit   int64
	SnapshotExclude []string
	SnapshotInclude []string
	// The [policy] and [agent] tables.
	Policy policy.Config
	Agent  AgentSettings

	sources map[string]origin
}

// Defaults returns the built-in settings, each with SourceDefault.
func Defaults() *Config {
	c := &Config{sources: make(map[string]origin, len(settings))}
	for _, s := range settings {
		if err := s.parse(c, s.def); err != nil {
			panic(fmt.Sprintf("config: default of %s: %v", s.key, err)) // a constant table's
		}
		c.sources[s.key] = origin{src: SourceDefault}
	}
	return c
}

// AgentSettings holds the [agent] table: the agent that answers instead
// of a person, and the limits of the unattended loop.
type AgentSettings struct {
	Name         string   // a preset, "command" or "openai"; "" when a person pastes the replies
	Command      []string // the command agent's program and arguments
	Model        string
	BaseURL      string // the openai agent's endpoint; "" for OPENAI_BASE_URL or OpenAI's
	APIKeyEnv    string // the variable holding the openai agent's key
	History      int    // token budget of earlier turns sent along; 0 for none
	Stream       bool   // stream the openai agent's replies
	MaxTurns     int
	MaxRestarts  int
	RestartPause time.Duration
	TimeBudget   time.Duration
}

func (c *Config) AgentSpec() agent.Spec {
	a := c.Agent
	return agent.Spec{
		Name: a.Name, Command: a.Command, Model: a.Model, BaseURL: a.BaseURL, APIKeyEnv: a.APIKeyEnv,
		History: a.History, NoStream: !a.Stream, MaxReply: c.MaxReply,
	}
}

// Source reports where the value of a setting (key as in courier.toml,
// "policy.deny") came from; "" for an unknown key.
func (c *Config) Source(key string) Source {
	return c.sources[key].source()
}

// Set sets one setting from text as an environment variable gives it,
// recording src as its source; key may use dashes for underscores, as
// flags do.
func (c *Config) Set(key, text string, src Source) error {
	s, err := find(strings.ReplaceAll(strings.TrimLeft(key, "-"), "-", "_"), true)
	if err != nil {
		return err
	}
	if err := s.parse(c, text); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	c.sources[s.key] = origin{src: src}
	return nil
}

// origin is where a value came from. A value from a file keeps the file
// and key, not the line: finding a line costs a parse (see locate), which
// only errors and courier config need.
type origin struct {
	src  Source
	file *fileText
	key  []string
}

type fileText struct{ name, data string }

func (o origin) source() Source {
	if o.file == nil {
		return o.src
	}
	return FileSource(o.file.name, locate(o.file.data, o.key))
}

// clone returns a copy to load into, so that a failed load leaves c as
// it was; slice fields are only ever replaced, so they may be shared.
func (c *Config) clone() *Config {
	d := *c
	d.sources = make(map[string]origin, len(settings))
	maps.Copy(d.sources, c.sources)
	return &d
}

const noColor = "NO_COLOR" // no-color.org

// LoadEnv applies the COURIER_* variables over c; an empty one counts as
// unset. Every bad value is reported, one a line, and then nothing is
// applied. NO_COLOR sets color to never over the default only, as
// no-color.org asks.
func (c *Config) LoadEnv(getenv func(string) string) error {
	next := c.clone()
	if getenv(noColor) != "" && next.sources["color"].src == SourceDefault {
		next.Color = ColorNever
		next.sources["color"] = origin{src: EnvSource(noColor)}
	}
	var errs []error
	for _, s := range settings {
		if !s.hasEnv() {
			continue
		}
		name := s.env()
		text := getenv(name)
		if text == "" {
			continue
		}
		if err := s.parse(next, text); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		next.sources[s.key] = origin{src: EnvSource(name)}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	*c = *next
	return nil
}
