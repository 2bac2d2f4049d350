package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/human"
)

const agentTable = "agent"

// HistoryOn is the token budget of history = true.
const HistoryOn = 100000

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

// agentSettings lists the [agent] table's settings, each with a flag.
func agentSettings() []setting {
	k := func(name string) string { return agentTable + "." + name }
	return []setting{
		{key: k("name"), flag: "agent", def: "",
			help: "the agent that answers instead of a person: " + strings.Join(agent.Names(), ", ") + " (empty: a person pastes the replies)",
			bind: func(c *Config) value { return enumValue{&c.Agent.Name, append(agent.Names(), "")} }},
		{key: k("command"), flag: "agent-command", def: "",
			help: "the command agent's program and arguments, run directly, never by a shell (on the command line split into words as a shell would)",
			bind: func(c *Config) value { return commandValue{&c.Agent.Command} }},
		{key: k("model"), flag: "model", def: "",
			help: "the model the agent uses (ollama and openai need one; the other presets have a default)",
			bind: func(c *Config) value { return stringValue{p: &c.Agent.Model} }},
		{key: k("base_url"), flag: "base-url", def: "",
			help: "the openai agent's endpoint, like http://localhost:11434/v1 (empty: OPENAI_BASE_URL, then https://api.openai.com/v1)",
			bind: func(c *Config) value { return stringValue{p: &c.Agent.BaseURL, check: checkBaseURL} }},
		{key: k("api_key_env"), flag: "api-key-env", def: agent.DefaultAPIKeyEnv,
			help: "the variable holding the openai agent's key (courier never writes the key anywhere)",
			bind: func(c *Config) value { return stringValue{p: &c.Agent.APIKeyEnv, check: checkEnvName} }},
		{key: k("history"), flag: "history", def: "false",
			help: "send the openai agent earlier requests and replies: false, true (up to " + strconv.Itoa(HistoryOn) + " tokens) or a token budget",
			bind: func(c *Config) value { return budgetValue{&c.Agent.History} }},
		{key: k("stream"), flag: "stream", def: "true",
			help: "let the openai agent stream its replies as they are written",
			bind: func(c *Config) value { return boolValue{&c.Agent.Stream} }},
		{key: k("max_turns"), flag: "max-turns", def: "30",
			help: "turns an agent may take before courier stops and waits for the person",
			bind: func(c *Config) value { return intValue{&c.Agent.MaxTurns, 1} }},
		{key: k("max_restarts"), flag: "max-restarts", def: strconv.Itoa(agent.DefaultMaxRestarts),
			help: "runs of one request that may fail before courier stops (1: no second try)",
			bind: func(c *Config) value { return intValue{&c.Agent.MaxRestarts, 1} }},
		{key: k("restart_pause"), flag: "restart-pause", def: human.Duration(agent.DefaultRestartPause),
			help: "wait between a failed run and the next",
			bind: func(c *Config) value { return durationValue{&c.Agent.RestartPause} }},
		{key: k("time_budget"), flag: "time-budget", def: "2h",
			help: "time an agent may work on a session before courier stops and waits for the person",
			bind: func(c *Config) value { return durationValue{&c.Agent.TimeBudget} }},
	}
}

func (c *Config) AgentSpec() agent.Spec {
	a := c.Agent
	return agent.Spec{
		Name: a.Name, Command: a.Command, Model: a.Model, BaseURL: a.BaseURL, APIKeyEnv: a.APIKeyEnv,
		History: a.History, NoStream: !a.Stream, MaxReply: c.MaxReply,
	}
}

type stringValue struct {
	p     *string
	check func(string) error
}

func (stringValue) kind() string { return "string" }

func (s stringValue) parse(text string) error {
	text = strings.TrimSpace(text)
	if s.check != nil && text != "" {
		if err := s.check(text); err != nil {
			return err
		}
	}
	*s.p = text
	return nil
}

func (s stringValue) decode(v any) error { return decodeString(v, "a string", s.parse) }
func (s stringValue) json() any          { return *s.p }

func checkBaseURL(text string) error {
	if _, err := agent.NormalizeBaseURL(text); err != nil {
		return wantError(`an http or https URL like "http://localhost:11434/v1"`, quote(text))
	}
	return nil
}

func checkEnvName(text string) error {
	if !agent.ValidEnvName(text) {
		return wantError(`a variable name like "OPENAI_API_KEY"`, quote(text))
	}
	return nil
}

// commandValue is a program and its arguments: a TOML array, or a line
// split as a shell would (never run by one).
type commandValue struct{ p *[]string }

const wantCommand = `a list of words like ["llm", "-m", "gpt-4o"]`

func (commandValue) kind() string { return "command" }

func (c commandValue) parse(text string) error {
	if strings.TrimSpace(text) == "" {
		*c.p = nil
		return nil
	}
	words, err := agent.SplitCommand(text)
	if err != nil {
		return err
	}
	*c.p = words
	return nil
}

func (c commandValue) decode(v any) error {
	out, err := decodeStrings(v, wantCommand, true)
	if err != nil {
		return err
	}
	*c.p = out
	return nil
}

func (c commandValue) json() any { return listValue{c.p}.json() }

// budgetValue is a token budget: false (0), true (HistoryOn) or a number.
type budgetValue struct{ p *int }

const wantBudget = "true, false or a number of tokens"

func (budgetValue) kind() string { return "budget" }

// parse reads a number as tokens ("1" is not true).
func (b budgetValue) parse(text string) error {
	if n, err := strconv.Atoi(strings.TrimSpace(text)); err == nil {
		return b.decode(int64(n))
	}
	var on bool
	if (boolValue{&on}).parse(text) != nil {
		return wantError(wantBudget, quote(text))
	}
	return b.decode(on)
}

func (b budgetValue) decode(v any) error {
	switch x := v.(type) {
	case bool:
		*b.p = map[bool]int{true: HistoryOn}[x]
		return nil
	case int64:
		if x < 0 {
			return wantError("a number of tokens of at least 0", describe(v))
		}
		if int64(int(x)) == x {
			*b.p = int(x)
			return nil
		}
	}
	return wantError(wantBudget, describe(v))
}

func (b budgetValue) json() any {
	switch *b.p {
	case 0:
		return false
	case HistoryOn:
		return true
	}
	return *b.p
}

// findFlag returns the setting a flag (without dashes) sets.
func findFlag(flag string) (setting, bool) {
	for _, s := range settings {
		if s.hasEnv() && s.flagName() == flag {
			return s, true
		}
	}
	return setting{}, false
}
