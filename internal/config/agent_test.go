package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/agent"
)

func TestAgentTableLoads(t *testing.T) {
	path := writeFile(t, `[agent]
name = "openai"
model = "qwen2.5-coder:7b"
base_url = "http://localhost:11434/v1"
api_key_env = "OLLAMA_KEY"
command = ["claude", "-p", "--tools", ""]
history = true
stream = false
max_turns = 50
max_restarts = 1
restart_pause = "30s"
time_budget = "45m"
`)
	c := Defaults()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	want := AgentSettings{
		Name: "openai", Model: "qwen2.5-coder:7b", BaseURL: "http://localhost:11434/v1", APIKeyEnv: "OLLAMA_KEY",
		Command: []string{"claude", "-p", "--tools", ""}, History: HistoryOn, Stream: false, MaxTurns: 50, MaxRestarts: 1,
		RestartPause: 30 * time.Second, TimeBudget: 45 * time.Minute,
	}
	if !equalAgent(c.Agent, want) {
		t.Errorf("loaded %+v\nwant   %+v", c.Agent, want)
	}
	if got := relative(path, string(c.Source("agent.model"))); got != "courier.toml:3" {
		t.Errorf("Source(agent.model) = %q", got)
	}
	spec := c.AgentSpec()
	if spec.Name != "openai" || spec.Model != want.Model || spec.BaseURL != want.BaseURL || spec.APIKeyEnv != "OLLAMA_KEY" ||
		spec.History != HistoryOn || !spec.NoStream || spec.MaxReply != c.MaxReply || !slices.Equal(spec.Command, want.Command) {
		t.Errorf("AgentSpec() = %+v", spec)
	}
	if _, err := agent.New(spec); err != nil {
		t.Errorf("the spec does not build an agent: %v", err)
	}
}

func TestAgentTableErrors(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"unknown agent", "[agent]\nname = \"chatgpt\"\n",
			`courier.toml:2: agent.name: want one of "claude", "codex", "gemini", "llm", "ollama", "command", "openai", got "chatgpt"`},
		{"agent not a table", "agent = \"claude\"\n",
			`courier.toml:1: agent: want a table like [agent], got "claude"`},
		{"command as a string", "[agent]\ncommand = \"llm -m gpt-4o\"\n",
			`courier.toml:2: agent.command: want a list of words like ["llm", "-m", "gpt-4o"], got "llm -m gpt-4o"`},
		{"command with an empty program", "[agent]\ncommand = [\"\", \"x\"]\n",
			`courier.toml:2: agent.command: want a list of words like ["llm", "-m", "gpt-4o"], got ["", "x"]`},
		{"bad base url", "[agent]\nbase_url = \"localhost:11434\"\n",
			`courier.toml:2: agent.base_url: want an http or https URL like "http://localhost:11434/v1", got "localhost:11434"`},
		{"bad key variable", "[agent]\napi_key_env = \"$OPENAI_API_KEY\"\n",
			`courier.toml:2: agent.api_key_env: want a variable name like "OPENAI_API_KEY", got "$OPENAI_API_KEY"`},
		{"history as text", "[agent]\nhistory = \"lots\"\n",
			`courier.toml:2: agent.history: want true, false or a number of tokens, got "lots"`},
		{"negative history", "[agent]\nhistory = -1\n",
			`courier.toml:2: agent.history: want a number of tokens of at least 0, got -1`},
		{"no turns", "[agent]\nmax_turns = 0\n",
			`courier.toml:2: agent.max_turns: want a whole number of at least 1, got 0`},
		{"no pause", "[agent]\nrestart_pause = \"0s\"\n",
			`courier.toml:2: agent.restart_pause: want a duration above zero, got "0s"`},
		{"agent key at the top", "model = \"gpt-4o\"\n",
			`courier.toml:1: unknown setting 'model'; did you mean 'model' in the [agent] table?`},
		{"setting after the agent table", "[agent]\nname = \"claude\"\ncopy = true\n",
			`courier.toml:3: unknown setting 'agent.copy'; 'copy' goes above the [agent] table, as keys after a [table] line belong to it`},
		{"misspelt key", "[agent]\nmax_turn = 3\n",
			`courier.toml:2: unknown setting 'agent.max_turn'; did you mean 'agent.max_turns'?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file)
			c := Defaults()
			err := c.LoadFile(path)
			if got := relative(path, errText(err)); got != tt.want {
				t.Errorf("LoadFile error\n got %s\nwant %s", got, tt.want)
			}
			if !equalConfig(*c, *Defaults()) {
				t.Errorf("a failed load changed the settings: %+v", c.Agent)
			}
		})
	}
}

// TestAgentSettingsFromEnvAndFlags sets the [agent] keys the way a
// person does on the command line: environment variables and flags,
// the command split into words as a shell would.
func TestAgentSettingsFromEnvAndFlags(t *testing.T) {
	c := Defaults()
	err := c.LoadEnv(env(map[string]string{
		"COURIER_AGENT_NAME":          "Ollama",
		"COURIER_AGENT_MODEL":         "llama3.2",
		"COURIER_AGENT_HISTORY":       "8000",
		"COURIER_AGENT_RESTART_PAUSE": "2s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	for flag, value := range map[string]string{
		"agent-command": `aichat --no-stream 'two words'`,
		"max-restarts":  "5",
		"agent":         "command",
	} {
		if err := c.Set(flag, value, FlagSource(flag)); err != nil {
			t.Fatalf("--%s %s: %v", flag, value, err)
		}
	}
	want := AgentSettings{Name: "command", Command: []string{"aichat", "--no-stream", "two words"}, Model: "llama3.2",
		APIKeyEnv: "OPENAI_API_KEY", History: 8000, Stream: true, MaxTurns: 30, MaxRestarts: 5,
		RestartPause: 2 * time.Second, TimeBudget: 2 * time.Hour}
	if !equalAgent(c.Agent, want) {
		t.Errorf("settings %+v\nwant     %+v", c.Agent, want)
	}
	for key, src := range map[string]Source{
		"agent.name": "flag --agent", "agent.command": "flag --agent-command", "agent.model": "env COURIER_AGENT_MODEL",
		"agent.history": "env COURIER_AGENT_HISTORY", "agent.time_budget": SourceDefault,
	} {
		if got := c.Source(key); got != src {
			t.Errorf("Source(%s) = %q, want %q", key, got, src)
		}
	}
	// Keys of the table work as well as flags.
	if err := c.Set("agent.max_turns", "7", "test"); err != nil || c.Agent.MaxTurns != 7 {
		t.Errorf("Set(agent.max_turns) = %v, max_turns %d", err, c.Agent.MaxTurns)
	}
}

func TestAgentCommandOnTheCommandLineIsNeverShellCode(t *testing.T) {
	for _, line := range []string{"llm | sh", "llm; rm -rf ~", "llm $(cat model)", "llm > out"} {
		c := Defaults()
		err := c.Set("agent-command", line, FlagSource("agent-command"))
		if err == nil || !strings.HasPrefix(err.Error(), "flag --agent-command: agent command") || !strings.Contains(err.Error(), "never through a shell") {
			t.Errorf("--agent-command %q: %v", line, err)
		}
		if c.Agent.Command != nil {
			t.Errorf("--agent-command %q set %q", line, c.Agent.Command)
		}
	}
	c := Defaults()
	err := c.LoadEnv(env(map[string]string{"COURIER_AGENT_COMMAND": "llm && curl evil"}))
	if err == nil || !strings.HasPrefix(err.Error(), "COURIER_AGENT_COMMAND: agent command") {
		t.Errorf("COURIER_AGENT_COMMAND: %v", err)
	}
}

func TestHistoryValues(t *testing.T) {
	for text, want := range map[string]int{"true": HistoryOn, "on": HistoryOn, "false": 0, "0": 0, "1": 1, "32000": 32000} {
		c := Defaults()
		if err := c.Set("history", text, "test"); err != nil || c.Agent.History != want {
			t.Errorf("--history %s: %d, %v; want %d", text, c.Agent.History, err, want)
		}
	}
}
