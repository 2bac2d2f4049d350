// Package config holds courier's settings: built-in defaults, then the
// courier.toml file, then COURIER_* environment variables, then
// command-line flags, each overriding the one before, with the source of
// every effective value kept so that it can be shown.
package config

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

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

// Config is the effective settings. Start from Defaults, which sets every
// field; the Load and Set methods override fields and record their source.
// The fields' meanings are listed in the settings table (Settings).
type Config struct {
	CommandTimeout time.Duration
	MaxOutput      int
	Copy           bool
	TokenBudget    int
	MaxReply       int64
	Poll           bool
	Settle         time.Duration
	Color          string
	Sandbox        string
	Network        bool
	Home           string
	ReadOnly       []string
	MaxProcesses   int
	MaxMemory      int64
	KeepEnv        []string
	Yes            bool
	ListLimit      int
	ReadLines      int
	Protocol       string
	Clipboard      bool
	Environment    bool
	// The snapshots that make commands undoable.
	Snapshots       bool
	SnapshotBudget  int64
	SnapshotLimit   int64
	SnapshotExclude []string
	SnapshotInclude []string
	// Policy holds the [policy] table: the person's rules, which
	// policy.New layers over courier's built-in ones.
	Policy policy.Config
	// Agent holds the [agent] table.
	Agent AgentSettings

	sources map[string]origin
}

// Defaults returns the built-in settings, each with SourceDefault.
func Defaults() *Config {
	c := &Config{sources: make(map[string]origin, len(settings))}
	for _, s := range settings {
		if err := s.bind(c).parse(s.def); err != nil {
			// The table is constant and its test parses every default,
			// so this is a programming error, not a user's.
			panic(fmt.Sprintf("config: default of %s: %v", s.key, err))
		}
		c.sources[s.key] = origin{src: SourceDefault}
	}
	return c
}

// Source reports where the value of a setting came from; key is as in
// courier.toml ("max_output", "policy.deny"). It is "" for an unknown key.
func (c *Config) Source(key string) Source {
	return c.sources[key].source()
}

// Set sets one setting from text the way an environment variable gives
// it, recording src as its source; the cli uses it for flags given on the
// command line. key may use dashes for underscores, as flags do. Lists are
// comma-separated.
func (c *Config) Set(key, text string, src Source) error {
	s, err := find(normalizeKey(key))
	if err != nil {
		// A flag of a table's key ("agent-command") names it by flag.
		if byFlag, ok := findFlag(strings.TrimLeft(key, "-")); ok {
			s, err = byFlag, nil
		}
	}
	if err != nil {
		return err
	}
	if err := s.bind(c).parse(text); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	c.setSource(s.key, origin{src: src})
	return nil
}

// setSource records an origin; a Config made without Defaults has no map
// yet.
func (c *Config) setSource(key string, o origin) {
	if c.sources == nil {
		c.sources = make(map[string]origin, len(settings))
	}
	c.sources[key] = o
}

// origin is where a value came from. A value from a file keeps the file
// and its key instead of its line, as finding a line costs a parse of the
// file (see locate) and only errors and courier config need it.
type origin struct {
	src  Source
	file *fileText
	key  []string
}

// fileText is a settings file as it was read.
type fileText struct{ name, data string }

func (o origin) source() Source {
	if o.file == nil {
		return o.src
	}
	return FileSource(o.file.name, locate(o.file.data, o.key))
}

// clone returns a copy whose changes do not reach c; loading works on a
// clone so that a failed load leaves c as it was. Slice fields are only
// ever replaced, never changed in place, so sharing them is safe.
func (c *Config) clone() *Config {
	d := *c
	d.sources = make(map[string]origin, len(settings))
	maps.Copy(d.sources, c.sources)
	return &d
}
