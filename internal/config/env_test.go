package config

import (
	"slices"
	"testing"
	"time"
)

func TestLoadEnv(t *testing.T) {
	tests := []struct {
		name  string
		vars  map[string]string
		check func(*Config) bool
	}{
		{"duration", map[string]string{"COURIER_COMMAND_TIMEOUT": "1m30s"},
			func(c *Config) bool { return c.CommandTimeout == 90*time.Second }},
		{"list with spaces and empty items", map[string]string{"COURIER_KEEP_ENV": " AWS_PROFILE, GH_*,,NPM_TOKEN ,"},
			func(c *Config) bool { return slices.Equal(c.KeepEnv, []string{"AWS_PROFILE", "GH_*", "NPM_TOKEN"}) }},
		{"bool spellings", map[string]string{"COURIER_COPY": "yes", "COURIER_NETWORK": "off", "COURIER_POLL": "1", "COURIER_YES": "TRUE"},
			func(c *Config) bool { return c.Copy && !c.Network && c.Poll && c.Yes }},
		{"sizes", map[string]string{"COURIER_MAX_REPLY": "512 kb"},
			func(c *Config) bool { return c.MaxReply == 512<<10 }},
		{"plain bytes", map[string]string{"COURIER_MAX_REPLY": "1000"},
			func(c *Config) bool { return c.MaxReply == 1000 }},
		{"enum in capitals", map[string]string{"COURIER_SANDBOX": "OFF"},
			func(c *Config) bool { return c.Sandbox == SandboxOff }},
		{"zero token budget", map[string]string{"COURIER_TOKEN_BUDGET": "0"},
			func(c *Config) bool { return c.TokenBudget == 0 }},
		{"numbers", map[string]string{"COURIER_LIST_LIMIT": "10", "COURIER_READ_LINES": " 20 ", "COURIER_SETTLE": "2s"},
			func(c *Config) bool { return c.ListLimit == 10 && c.ReadLines == 20 && c.Settle == 2*time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Defaults()
			if err := c.LoadEnv(env(tt.vars)); err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Errorf("LoadEnv(%v) gave %+v", tt.vars, *c)
			}
			for name := range tt.vars {
				key := name[len("COURIER_"):]
				if got := c.Source(lower(key)); got != EnvSource(name) {
					t.Errorf("Source(%q) = %q, want %q", lower(key), got, EnvSource(name))
				}
			}
		})
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func TestLoadEnvErrors(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want string
	}{
		{"not a number", map[string]string{"COURIER_MAX_OUTPUT": "lots"},
			`COURIER_MAX_OUTPUT: want a whole number, got "lots"`},
		{"negative", map[string]string{"COURIER_TOKEN_BUDGET": "-5"},
			`COURIER_TOKEN_BUDGET: want a whole number of at least 0, got -5`},
		{"bad duration", map[string]string{"COURIER_SETTLE": "1 second"},
			`COURIER_SETTLE: want a duration like "45s", got "1 second"`},
		{"bad bool", map[string]string{"COURIER_COPY": "maybe"},
			`COURIER_COPY: want true or false, got "maybe"`},
		{"bad size", map[string]string{"COURIER_MAX_REPLY": "1.5MB"},
			`COURIER_MAX_REPLY: want a size like "20MB", got "1.5MB"`},
		{"bad enum", map[string]string{"COURIER_COLOR": "yes"},
			`COURIER_COLOR: want one of "auto", "always", "never", got "yes"`},
		{"several, in table order", map[string]string{"COURIER_READ_LINES": "x", "COURIER_COMMAND_TIMEOUT": "0s", "COURIER_COPY": "true"},
			"COURIER_COMMAND_TIMEOUT: want a duration above zero, got \"0s\"\n" +
				`COURIER_READ_LINES: want a whole number, got "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Defaults()
			err := c.LoadEnv(env(tt.vars))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("LoadEnv error =\n%v\nwant\n%s", err, tt.want)
			}
			if !equalConfig(*c, *Defaults()) {
				t.Errorf("environment with errors changed settings: %+v", *c)
			}
		})
	}
}

// TestNoColor checks NO_COLOR's place: over the default, under the file,
// COURIER_COLOR and --color.
func TestNoColor(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		vars    map[string]string
		flag    string
		want    string
		wantSrc Source
	}{
		{"alone", "", map[string]string{"NO_COLOR": "1"}, "", ColorNever, "env NO_COLOR"},
		{"any value", "", map[string]string{"NO_COLOR": "false"}, "", ColorNever, "env NO_COLOR"},
		{"empty is unset", "", map[string]string{"NO_COLOR": ""}, "", ColorAuto, SourceDefault},
		{"file overrides", "color = \"always\"\n", map[string]string{"NO_COLOR": "1"}, "", ColorAlways, "courier.toml:1"},
		{"COURIER_COLOR overrides", "", map[string]string{"NO_COLOR": "1", "COURIER_COLOR": "auto"}, "", ColorAuto, "env COURIER_COLOR"},
		{"flag overrides", "", map[string]string{"NO_COLOR": "1"}, "always", ColorAlways, "flag --color"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file)
			c := Defaults()
			if err := c.LoadFile(path); err != nil {
				t.Fatal(err)
			}
			if err := c.LoadEnv(env(tt.vars)); err != nil {
				t.Fatal(err)
			}
			if tt.flag != "" {
				if err := c.Set("color", tt.flag, FlagSource("color")); err != nil {
					t.Fatal(err)
				}
			}
			src := Source(relative(path, string(c.Source("color"))))
			if c.Color != tt.want || src != tt.wantSrc {
				t.Errorf("color = %q from %q, want %q from %q", c.Color, src, tt.want, tt.wantSrc)
			}
		})
	}
}
