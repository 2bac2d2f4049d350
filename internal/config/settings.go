package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/shell"
)

// setting is one entry of the settings table, bound to its Config field.
type setting struct {
	// key is the name in courier.toml ("policy.deny": deny of [policy]).
	// Top-level keys also have an environment variable (COURIER_ and the
	// key in capitals) and a flag (dashes for underscores).
	key string
	// flag gives a key of a table a flag, and so a variable
	// (COURIER_AGENT_MODEL).
	flag string
	def  string // as an environment variable would give it
	help string
	bind func(*Config) value
}

// DefaultSettle is how long a reply file must stay unchanged before it is
// read: it bridges the pauses of an editor or browser writing in pieces,
// and is short next to a chat turn. Defaults a lower package also falls
// back on are that package's (shell.DefaultMaxOutput...).
const DefaultSettle = time.Second

// settings lists every setting in the order courier config shows them.
var settings = slices.Concat(baseSettings, agentSettings())

// baseSettings are the top-level settings and the [policy] table.
var baseSettings = []setting{
	{key: "command_timeout", def: "2m", help: "time limit of each RUN_COMMAND (the coding CLIs give a command 2 minutes too)",
		bind: func(c *Config) value { return durationValue{&c.CommandTimeout} }},
	{key: "max_output", def: strconv.Itoa(shell.DefaultMaxOutput), help: "characters of command output kept for the LLM",
		bind: func(c *Config) value { return intValue{&c.MaxOutput, 1} }},
	{key: "copy", def: "false", help: "put each new outbox on the clipboard",
		bind: func(c *Config) value { return boolValue{&c.Copy} }},
	{key: "token_budget", def: "100000", help: "warn when an outbox's estimated tokens exceed this (0: never)",
		bind: func(c *Config) value { return intValue{&c.TokenBudget, 0} }},
	{key: "max_reply", def: sizeText(agent.DefaultMaxReply), help: "largest reply accepted (like 512KB, 20MB, 1GB or bytes; 1KB is 1024 bytes)",
		bind: func(c *Config) value { return sizeValue{&c.MaxReply} }},
	{key: "poll", def: "false", help: "watch the inbox by listing it instead of file events",
		bind: func(c *Config) value { return boolValue{&c.Poll} }},
	{key: "settle", def: human.Duration(DefaultSettle), help: "how long a reply file must stay unchanged before it is read",
		bind: func(c *Config) value { return durationValue{&c.Settle} }},
	{key: "color", def: ColorAuto, help: "colour output: auto (on a terminal), always or never; NO_COLOR means never unless courier.toml, COURIER_COLOR or --color say otherwise",
		bind: func(c *Config) value { return enumValue{&c.Color, []string{ColorAuto, ColorAlways, ColorNever}} }},
	{key: "sandbox", def: SandboxAuto, help: "confine commands (namespaces, Landlock, no capabilities): auto (every layer the kernel allows), strict (refuse to run commands when one is missing) or off; see courier sandbox check",
		bind: func(c *Config) value { return enumValue{&c.Sandbox, []string{SandboxAuto, SandboxStrict, SandboxOff}} }},
	{key: "network", def: "true", help: "let commands use the network; false leaves them only a private loopback and no UNIX sockets",
		bind: func(c *Config) value { return boolValue{&c.Network} }},
	{key: "home", def: HomePrivate, help: "what commands see of your home folder: private (nothing but the toolchains, the folders on PATH and the configuration files builds read, read-only) or readable (all of it read-only but the places that hold credentials, which look empty)",
		bind: func(c *Config) value { return enumValue{&c.Home, []string{HomePrivate, HomeReadable}} }},
	{key: "read_only", def: "", help: "more folders and files commands may read (absolute paths); they never write them",
		bind: func(c *Config) value { return listValue{&c.ReadOnly} }},
	{key: "max_processes", def: "1024", help: "processes one command may have at once (0: no limit)",
		bind: func(c *Config) value { return intValue{&c.MaxProcesses, 0} }},
	{key: "max_memory", def: "2GB", help: "memory one command may use (like 512MB, 4GB; 0: no limit)",
		bind: func(c *Config) value { return sizeValue{&c.MaxMemory} }},
	{key: "keep_env", def: "", help: "more variables (names or globs) passed to commands besides the allow-listed ones (courier config lists them)",
		bind: func(c *Config) value { return listValue{&c.KeepEnv} }},
	{key: "yes", def: "false", help: "approve every command that needs approval",
		bind: func(c *Config) value { return boolValue{&c.Yes} }},
	{key: "list_limit", def: "300", help: "files the workspace listing shows before it stops",
		bind: func(c *Config) value { return intValue{&c.ListLimit, 1} }},
	{key: "read_lines", def: "500", help: "lines of one requested file an outbox shows",
		bind: func(c *Config) value { return intValue{&c.ReadLines, 1} }},
	{key: "protocol", flag: "protocol-text", def: ProtocolEvery, help: "the protocol text in every request, or in the first of a chat only (first: later requests carry a short reminder; 'courier say --new-chat' brings it back)",
		bind: func(c *Config) value { return enumValue{&c.Protocol, []string{ProtocolEvery, ProtocolFirst}} }},
	{key: "snapshots", def: "true", help: "record the workspace around every turn, so that undo reverses what commands did too (false: undo reverts file commands only)",
		bind: func(c *Config) value { return boolValue{&c.Snapshots} }},
	{key: "snapshot_budget", def: sizeText(history.DefaultBudget), help: "disk space (as du counts it) the snapshots kept for undo take per session; beyond it the oldest turns' are dropped (and can no longer be undone), with a warning",
		bind: func(c *Config) value { return sizeValue{&c.SnapshotBudget} }},
	{key: "snapshot_limit", def: sizeText(history.DefaultTurnLimit), help: "content one turn may snapshot; beyond it the turn is only partly undoable",
		bind: func(c *Config) value { return sizeValue{&c.SnapshotLimit} }},
	{key: "snapshot_exclude", def: "", help: ".gitignore-style patterns never snapshotted (e.g. data/, *.iso)",
		bind: func(c *Config) value { return listValue{&c.SnapshotExclude} }},
	{key: "snapshot_include", def: "", help: "patterns snapshotted although .gitignore leaves them out (e.g. .env)",
		bind: func(c *Config) value { return listValue{&c.SnapshotInclude} }},
	{key: "environment", def: "true", help: "describe the machine (tools and versions, git, the commands' limits) in the first request of a chat",
		bind: func(c *Config) value { return boolValue{&c.Environment} }},
	{key: "clipboard", def: "false", help: "watch also takes the LLM's answer when you copy it (text with command blocks)",
		bind: func(c *Config) value { return boolValue{&c.Clipboard} }},
	{key: policyTable + ".deny", def: "", help: "rules of commands never run",
		bind: func(c *Config) value { return ruleList{&c.Policy.Deny, "deny"} }},
	{key: policyTable + ".ask", def: "", help: "rules of commands run only with the person's approval",
		bind: func(c *Config) value { return ruleList{&c.Policy.Ask, "ask"} }},
	{key: policyTable + ".allow", def: "", help: "rules of commands run without asking",
		bind: func(c *Config) value { return ruleList{&c.Policy.Allow, "allow"} }},
	{key: policyTable + ".no_defaults", def: "false", help: "drop courier's built-in rules, keeping only these lists",
		bind: func(c *Config) value { return boolValue{&c.Policy.NoDefaults} }},
}

const policyTable = "policy"

// tableNames lists the tables of courier.toml in display order.
func tableNames() []string { return []string{policyTable, agentTable} }

func isTable(name string) bool { return slices.Contains(tableNames(), name) }

// Setting describes one setting, for help texts and flag definitions.
type Setting struct {
	Key     string   // as in courier.toml: "command_timeout", "policy.deny"
	Kind    string   // "duration", "int", "bool", "size", "string", "list"...
	Values  []string // the values a "string" setting allows, if few
	Default string   // as text, lists comma-separated
	// Env and Flag (without dashes) set it; "" for keys of [policy].
	Env  string
	Flag string
	Help string
}

// Settings describes every setting in display order.
func Settings() []Setting {
	var c Config
	out := make([]Setting, 0, len(settings))
	for _, s := range settings {
		v := s.bind(&c)
		info := Setting{Key: s.key, Kind: v.kind(), Default: s.def, Help: s.help}
		if e, ok := v.(enumValue); ok {
			info.Values = slices.DeleteFunc(slices.Clone(e.allowed), func(a string) bool { return a == "" })
		}
		if s.hasEnv() {
			info.Env, info.Flag = s.env(), s.flagName()
		}
		out = append(out, info)
	}
	return out
}

func (s setting) topLevel() bool { return !strings.Contains(s.key, ".") }

// hasEnv reports whether the setting has an environment variable and a
// flag: top-level ones and those given a flag.
func (s setting) hasEnv() bool { return s.topLevel() || s.flag != "" }

func (s setting) env() string {
	return "COURIER_" + strings.ToUpper(strings.ReplaceAll(s.key, ".", "_"))
}

func (s setting) flagName() string {
	if s.flag != "" {
		return s.flag
	}
	return strings.ReplaceAll(s.key, "_", "-")
}

// find returns the setting named key, or an error suggesting a near name.
func find(key string) (setting, error) {
	for _, s := range settings {
		if s.key == key {
			return s, nil
		}
	}
	return setting{}, fmt.Errorf("unknown setting '%s'%s", key, suggestion(key))
}

// normalizeKey turns a flag name into a key.
func normalizeKey(key string) string {
	return strings.ReplaceAll(strings.TrimLeft(key, "-"), "-", "_")
}
