package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c := Defaults()
	want := Config{
		CommandTimeout: 2 * time.Minute, MaxOutput: 4000, TokenBudget: 100000,
		MaxReply: 20 << 20, Settle: time.Second, Color: ColorAuto, Sandbox: SandboxAuto,
		Network: true, Home: HomePrivate, MaxProcesses: 1024, MaxMemory: 2 << 30, ListLimit: 300, ReadLines: 500,
		Protocol: ProtocolEvery, Environment: true,
		Agent: AgentSettings{APIKeyEnv: "OPENAI_API_KEY", Stream: true, MaxTurns: 30, MaxRestarts: 3,
			RestartPause: 5 * time.Second, TimeBudget: 2 * time.Hour},
	}
	got := *c
	got.sources = nil
	if !equalConfig(got, want) {
		t.Errorf("Defaults() = %+v\nwant %+v", got, want)
	}
	for _, s := range Settings() {
		if src := c.Source(s.Key); src != SourceDefault {
			t.Errorf("Source(%q) = %q, want %q", s.Key, src, SourceDefault)
		}
	}
}

func equalConfig(a, b Config) bool {
	return a.CommandTimeout == b.CommandTimeout && a.MaxOutput == b.MaxOutput && a.Copy == b.Copy &&
		a.TokenBudget == b.TokenBudget && a.MaxReply == b.MaxReply && a.Poll == b.Poll &&
		a.Settle == b.Settle && a.Color == b.Color && a.Sandbox == b.Sandbox &&
		a.Network == b.Network && a.Home == b.Home && slices.Equal(a.KeepEnv, b.KeepEnv) && a.Yes == b.Yes &&
		a.ListLimit == b.ListLimit && a.ReadLines == b.ReadLines &&
		slices.Equal(a.Policy.Deny, b.Policy.Deny) && slices.Equal(a.Policy.Ask, b.Policy.Ask) &&
		slices.Equal(a.Policy.Allow, b.Policy.Allow) && a.Policy.NoDefaults == b.Policy.NoDefaults &&
		equalAgent(a.Agent, b.Agent)
}

func equalAgent(a, b AgentSettings) bool {
	return a.Name == b.Name && slices.Equal(a.Command, b.Command) && a.Model == b.Model && a.BaseURL == b.BaseURL &&
		a.APIKeyEnv == b.APIKeyEnv && a.History == b.History && a.Stream == b.Stream && a.MaxTurns == b.MaxTurns &&
		a.MaxRestarts == b.MaxRestarts && a.RestartPause == b.RestartPause && a.TimeBudget == b.TimeBudget
}

func TestSettingsDescribeEnvAndFlags(t *testing.T) {
	tests := []struct {
		key, kind, env, flag, def string
	}{
		{"command_timeout", "duration", "COURIER_COMMAND_TIMEOUT", "command-timeout", "2m"},
		{"max_output", "int", "COURIER_MAX_OUTPUT", "max-output", "4000"},
		{"max_reply", "size", "COURIER_MAX_REPLY", "max-reply", "20MB"},
		{"keep_env", "list", "COURIER_KEEP_ENV", "keep-env", ""},
		{"color", "string", "COURIER_COLOR", "color", "auto"},
		{"policy.deny", "list", "", "", ""},
		{"policy.no_defaults", "bool", "", "", "false"},
		{"agent.name", "string", "COURIER_AGENT_NAME", "agent", ""},
		{"agent.command", "command", "COURIER_AGENT_COMMAND", "agent-command", ""},
		{"agent.model", "string", "COURIER_AGENT_MODEL", "model", ""},
		{"agent.base_url", "string", "COURIER_AGENT_BASE_URL", "base-url", ""},
		{"agent.api_key_env", "string", "COURIER_AGENT_API_KEY_ENV", "api-key-env", "OPENAI_API_KEY"},
		{"agent.history", "budget", "COURIER_AGENT_HISTORY", "history", "false"},
		{"agent.stream", "bool", "COURIER_AGENT_STREAM", "stream", "true"},
		{"agent.max_turns", "int", "COURIER_AGENT_MAX_TURNS", "max-turns", "30"},
		{"agent.max_restarts", "int", "COURIER_AGENT_MAX_RESTARTS", "max-restarts", "3"},
		{"agent.restart_pause", "duration", "COURIER_AGENT_RESTART_PAUSE", "restart-pause", "5s"},
		{"agent.time_budget", "duration", "COURIER_AGENT_TIME_BUDGET", "time-budget", "2h"},
	}
	all := Settings()
	for _, tt := range tests {
		i := slices.IndexFunc(all, func(s Setting) bool { return s.Key == tt.key })
		if i < 0 {
			t.Errorf("Settings() lacks %q", tt.key)
			continue
		}
		s := all[i]
		if s.Kind != tt.kind || s.Env != tt.env || s.Flag != tt.flag || s.Default != tt.def || s.Help == "" {
			t.Errorf("Settings()[%q] = %+v, want kind %q env %q flag %q default %q and a help text",
				tt.key, s, tt.kind, tt.env, tt.flag, tt.def)
		}
	}
	i := slices.IndexFunc(all, func(s Setting) bool { return s.Key == "sandbox" })
	if got := all[i].Values; !slices.Equal(got, []string{"auto", "strict", "off"}) {
		t.Errorf("sandbox values = %q", got)
	}
	// Flags are unique: the cli defines one for each.
	seen := map[string]string{}
	for _, s := range all {
		if s.Flag == "" {
			continue
		}
		if other, dup := seen[s.Flag]; dup {
			t.Errorf("settings %s and %s share the flag --%s", other, s.Key, s.Flag)
		}
		seen[s.Flag] = s.Key
	}
	i = slices.IndexFunc(all, func(s Setting) bool { return s.Key == "home" })
	if i < 0 || !slices.Equal(all[i].Values, []string{"private", "readable"}) || all[i].Default != "private" || all[i].Env != "COURIER_HOME" {
		t.Errorf("the home setting is missing or wrong: %+v", all)
	}
}

// TestPrecedence loads each layer the way the cli does and checks the
// value and its reported source.
func TestPrecedence(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		flag    string // --max-output value, "" when not given
		want    int
		wantSrc string
	}{
		{"default", "", nil, "", 4000, "default"},
		{"file over default", "copy = true\nmax_output = 1000\n", nil, "", 1000, "courier.toml:2"},
		{"env over file", "max_output = 1000\n", map[string]string{"COURIER_MAX_OUTPUT": "2000"}, "", 2000, "env COURIER_MAX_OUTPUT"},
		{"flag over env", "max_output = 1000\n", map[string]string{"COURIER_MAX_OUTPUT": "2000"}, "3000", 3000, "flag --max-output"},
		{"flag over file", "max_output = 1000\n", nil, "3000", 3000, "flag --max-output"},
		{"empty env is unset", "max_output = 1000\n", map[string]string{"COURIER_MAX_OUTPUT": ""}, "", 1000, "courier.toml:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file)
			c := Defaults()
			if err := c.LoadFile(path); err != nil {
				t.Fatal(err)
			}
			if err := c.LoadEnv(env(tt.env)); err != nil {
				t.Fatal(err)
			}
			if tt.flag != "" {
				if err := c.Set("max-output", tt.flag, FlagSource("max-output")); err != nil {
					t.Fatal(err)
				}
			}
			src := relative(path, string(c.Source("max_output")))
			if c.MaxOutput != tt.want || src != tt.wantSrc {
				t.Errorf("max_output = %d from %q, want %d from %q", c.MaxOutput, src, tt.want, tt.wantSrc)
			}
		})
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		key, value string
		wantErr    string
		check      func(*Config) bool
	}{
		{"command-timeout", "2m", "", func(c *Config) bool { return c.CommandTimeout == 2*time.Minute }},
		{"command_timeout", "90s", "", func(c *Config) bool { return c.CommandTimeout == 90*time.Second }},
		{"--yes", "true", "", func(c *Config) bool { return c.Yes }},
		{"keep-env", "AWS_PROFILE,GH_*", "", func(c *Config) bool { return slices.Equal(c.KeepEnv, []string{"AWS_PROFILE", "GH_*"}) }},
		{"max-reply", "512KB", "", func(c *Config) bool { return c.MaxReply == 512<<10 }},
		{"max-output", "lots", `flag --max-output: want a whole number, got "lots"`, nil},
		{"color", "blue", `flag --color: want one of "auto", "always", "never", got "blue"`, nil},
		{"max-ouput", "1", "unknown setting 'max_ouput'; did you mean 'max_output'?", nil},
		{"verbose", "1", "unknown setting 'verbose'", nil},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			c := Defaults()
			err := c.Set(tt.key, tt.value, FlagSource(strings.ReplaceAll(strings.TrimLeft(tt.key, "-"), "_", "-")))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Set error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Errorf("Set(%q, %q) gave %+v", tt.key, tt.value, *c)
			}
			key := strings.ReplaceAll(strings.TrimLeft(tt.key, "-"), "-", "_")
			if want := Source("flag --" + strings.ReplaceAll(key, "_", "-")); c.Source(key) != want {
				t.Errorf("Source(%q) = %q, want %q", key, c.Source(key), want)
			}
		})
	}
}
