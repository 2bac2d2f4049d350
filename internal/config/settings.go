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
	"github.com/courier-agent/courier/internal/textdist"
)

// setting is one entry of the settings table; its value lives in the
// Config field its key names (see field).
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
	// The rules of the value beyond its Go type: how names a kind the
	// type does not tell; min bounds a whole number; values are the words
	// a string may be; check judges a string, or each string of a list.
	how    string
	min    int
	values []string
	check  func(string) error
}

// DefaultSettle is how long a reply file must stay unchanged before it is
// read: it bridges the pauses of an editor or browser writing in pieces,
// and is short next to a chat turn. Defaults a lower package also falls
// back on are that package's (shell.DefaultMaxOutput...).
const DefaultSettle = time.Second

// HistoryOn is the token budget of agent.history = true.
const HistoryOn = 100000

// settings lists every setting in the order courier config shows them.
var settings = []setting{
	{key: "command_timeout", def: "2m", help: "time limit of each RUN_COMMAND (the coding CLIs give a command 2 minutes too)"},
	{key: "max_output", def: strconv.Itoa(shell.DefaultMaxOutput), min: 1, help: "characters of command output kept for the LLM"},
	{key: "copy", def: "false", help: "put each new outbox on the clipboard"},
	{key: "token_budget", def: "100000", help: "warn when an outbox's estimated tokens exceed this (0: never)"},
	{key: "max_reply", def: formatSize(agent.DefaultMaxReply), help: "largest reply accepted (like 512KB, 20MB, 1GB or bytes; 1KB is 1024 bytes)"},
	{key: "poll", def: "false", help: "watch the inbox by listing it instead of file events"},
	{key: "settle", def: human.Duration(DefaultSettle), help: "how long a reply file must stay unchanged before it is read"},
	{key: "color", def: ColorAuto, values: []string{ColorAuto, ColorAlways, ColorNever}, help: "colour output: auto (on a terminal), always or never; NO_COLOR means never unless courier.toml, COURIER_COLOR or --color say otherwise"},
	{key: "sandbox", def: SandboxAuto, values: []string{SandboxAuto, SandboxStrict, SandboxOff}, help: "confine commands (namespaces, Landlock, no capabilities): auto (every layer the kernel allows), strict (refuse to run commands when one is missing) or off; see courier sandbox check"},
	{key: "network", def: "true", help: "let commands use the network; false leaves them only a private loopback and no UNIX sockets"},
	{key: "home", def: HomePrivate, values: []string{HomePrivate, HomeReadable}, help: "what commands see of your home folder: private (nothing but the toolchains, the folders on PATH and the configuration files builds read, read-only) or readable (all of it read-only but the places that hold credentials, which look empty)"},
	{key: "read_only", help: "more folders and files commands may read (absolute paths); they never write them"},
	{key: "max_processes", def: "1024", help: "processes one command may have at once (0: no limit)"},
	{key: "max_memory", def: "2GB", help: "memory one command may use (like 512MB, 4GB; 0: no limit)"},
	{key: "keep_env", help: "more variables (names or globs) passed to commands besides the allow-listed ones (courier config lists them)"},
	{key: "yes", def: "false", help: "approve every command that needs approval"},
	{key: "list_limit", def: "300", min: 1, help: "files the workspace listing shows before it stops"},
	{key: "read_lines", def: "500", min: 1, help: "lines of one requested file an outbox shows"},
	{key: "protocol", flag: "protocol-text", def: ProtocolEvery, values: []string{ProtocolEvery, ProtocolFirst}, help: "the protocol text in every request, or in the first of a chat only (first: later requests carry a short reminder; 'courier say --new-chat' brings it back)"},
	{key: "snapshots", def: "true", help: "record the workspace around every turn, so that undo reverses what commands did too (false: undo reverts file commands only)"},
	{key: "snapshot_budget", def: formatSize(history.DefaultBudget), help: "disk space (as du counts it) the snapshots kept for undo take per session; beyond it the oldest turns' are dropped (and can no longer be undone), with a warning"},
	{key: "snapshot_limit", def: formatSize(history.DefaultTurnLimit), help: "content one turn may snapshot; beyond it the turn is only partly undoable"},
	{key: "snapshot_exclude", help: ".gitignore-style patterns never snapshotted (e.g. data/, *.iso)"},
	{key: "snapshot_include", help: "patterns snapshotted although .gitignore leaves them out (e.g. .env)"},
	{key: "environment", def: "true", help: "describe the machine (tools and versions, git, the commands' limits) in the first request of a chat"},
	{key: "clipboard", def: "false", help: "watch also takes the LLM's answer when you copy it (text with command blocks)"},
	{key: "policy.deny", check: rule("deny"), help: "rules of commands never run"},
	{key: "policy.ask", check: rule("ask"), help: "rules of commands run only with the person's approval"},
	{key: "policy.allow", check: rule("allow"), help: "rules of commands run without asking"},
	{key: "policy.no_defaults", def: "false", help: "drop courier's built-in rules, keeping only these lists"},
	{key: "agent.name", flag: "agent", values: append(agent.Names(), ""), help: "the agent that answers instead of a person: " + strings.Join(agent.Names(), ", ") + " (empty: a person pastes the replies)"},
	{key: "agent.command", flag: "agent-command", how: command, help: "the command agent's program and arguments, run directly, never by a shell (on the command line split into words as a shell would)"},
	{key: "agent.model", flag: "model", help: "the model the agent uses (ollama and openai need one; the other presets have a default)"},
	{key: "agent.base_url", flag: "base-url", check: checkBaseURL, help: "the openai agent's endpoint, like http://localhost:11434/v1 (empty: OPENAI_BASE_URL, then https://api.openai.com/v1)"},
	{key: "agent.api_key_env", flag: "api-key-env", def: agent.DefaultAPIKeyEnv, check: checkEnvName, help: "the variable holding the openai agent's key (courier never writes the key anywhere)"},
	{key: "agent.history", flag: "history", def: "false", how: budget, help: "send the openai agent earlier requests and replies: false, true (up to " + strconv.Itoa(HistoryOn) + " tokens) or a token budget"},
	{key: "agent.stream", flag: "stream", def: "true", help: "let the openai agent stream its replies as they are written"},
	{key: "agent.max_turns", flag: "max-turns", def: "30", min: 1, help: "turns an agent may take before courier stops and waits for the person"},
	{key: "agent.max_restarts", flag: "max-restarts", def: strconv.Itoa(agent.DefaultMaxRestarts), min: 1, help: "runs of one request that may fail before courier stops (1: no second try)"},
	{key: "agent.restart_pause", flag: "restart-pause", def: human.Duration(agent.DefaultRestartPause), help: "wait between a failed run and the next"},
	{key: "agent.time_budget", flag: "time-budget", def: "2h", help: "time an agent may work on a session before courier stops and waits for the person"},
}

// tableNames lists the tables of courier.toml in display order.
var tableNames = []string{"policy", "agent"}

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
	out := make([]Setting, 0, len(settings))
	for _, s := range settings {
		info := Setting{Key: s.key, Kind: s.kind(), Default: s.def, Help: s.help,
			Values: slices.DeleteFunc(slices.Clone(s.values), func(a string) bool { return a == "" })}
		if s.hasEnv() {
			info.Env, info.Flag = s.env(), s.flagName()
		}
		out = append(out, info)
	}
	return out
}

// hasEnv reports whether the setting has an environment variable and a
// flag: top-level ones and those given a flag.
func (s setting) hasEnv() bool { return !strings.Contains(s.key, ".") || s.flag != "" }

func (s setting) env() string {
	return "COURIER_" + strings.ToUpper(strings.ReplaceAll(s.key, ".", "_"))
}

func (s setting) flagName() string {
	if s.flag != "" {
		return s.flag
	}
	return strings.ReplaceAll(s.key, "_", "-")
}

// find returns the setting named key (or, with flags, a flag with
// underscores for dashes), or an error suggesting a near name.
func find(key string, flags bool) (setting, error) {
	for _, s := range settings {
		if s.key == key || flags && s.hasEnv() && strings.ReplaceAll(s.flagName(), "-", "_") == key {
			return s, nil
		}
	}
	return setting{}, fmt.Errorf("unknown setting '%s'%s", key, suggestion(key))
}

// suggestion completes an unknown-setting error: a known key spelled
// nearly like key, or the right place for a key written in the wrong
// table, the commonest slip in TOML, where every key after a [table] line
// belongs to that table.
func suggestion(key string) string {
	parent, name, nested := strings.Cut(key, ".")
	if !nested {
		name = key
	}
	var keys []string
	for _, s := range settings {
		sParent, sName, sNested := strings.Cut(s.key, ".")
		switch {
		case nested && slices.Contains(tableNames, parent) && !sNested && s.key == name:
			return "; '" + name + "' goes above the [" + parent + "] table, as keys after a [table] line belong to it"
		case !nested && sNested && sName == name:
			return "; did you mean '" + name + "' in the [" + sParent + "] table?"
		}
		keys = append(keys, s.key)
	}
	if best := textdist.Nearest(key, append(keys, tableNames...)); best != "" {
		return "; did you mean '" + best + "'?"
	}
	return ""
}
