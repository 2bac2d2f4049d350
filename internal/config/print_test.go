package config

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// layered builds settings from every layer, as courier config would show
// them after a session's setup.
func layered(t *testing.T) (*Config, string) {
	t.Helper()
	path := writeFile(t, `copy = true
keep_env = ["AWS_PROFILE", "GH_*"]
max_reply = 1000

[policy]
deny = ["curl # no downloads here", "wget"]
allow = ["git push"]

[agent]
name = "command"
history = 20000
`)
	c := Defaults()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadEnv(env(map[string]string{"COURIER_MAX_OUTPUT": "8000", "NO_COLOR": "1", "COURIER_AGENT_MAX_TURNS": "12"})); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("command-timeout", "2m0s", FlagSource("command-timeout")); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("agent-command", `llm -m "gpt 4o"`, FlagSource("agent-command")); err != nil {
		t.Fatal(err)
	}
	return c, path
}

func TestPrintGolden(t *testing.T) {
	c, path := layered(t)
	var b strings.Builder
	if err := c.Print(&b); err != nil {
		t.Fatal(err)
	}
	got := relative(path, b.String())
	golden := filepath.Join("testdata", "print.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("Print =\n%s\nwant (%s)\n%s", got, golden, want)
	}
}

func TestPrintNoDefaults(t *testing.T) {
	c := Defaults()
	if err := c.Set("policy.no_defaults", "true", "test"); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.Print(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no_defaults = true  # test\n# courier's built-in rules are off (no_defaults)\n") {
		t.Errorf("Print does not say the built-in rules are off:\n%s", b.String())
	}
}

// TestPrintLoadsBack checks that Print writes a valid courier.toml that
// gives the same settings.
func TestPrintLoadsBack(t *testing.T) {
	c, _ := layered(t)
	if err := c.Set("keep_env", `QUOTE"D,BACK\SLASH,TAB	BED`, "test"); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.Print(&b); err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, b.String())
	back := Defaults()
	if err := back.LoadFile(path); err != nil {
		t.Fatalf("Print's output does not load: %v\n%s", err, b.String())
	}
	if !equalConfig(*back, *c) {
		t.Errorf("loaded back %+v\nwant        %+v", *back, *c)
	}
}

func TestJSON(t *testing.T) {
	c, path := layered(t)
	data, err := c.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Settings []struct {
			Key    string `json:"key"`
			Value  any    `json:"value"`
			Source string `json:"source"`
		}
	}
	if err := json.Unmarshal(data, &got.Settings); err != nil {
		t.Fatalf("the settings are not a bare array: %v", err)
	}
	if len(got.Settings) != len(Settings()) {
		t.Fatalf("JSON has %d settings, want %d", len(got.Settings), len(Settings()))
	}
	want := map[string]string{
		"command_timeout": `"2m" from flag --command-timeout`,
		"max_output":      `8000 from env COURIER_MAX_OUTPUT`,
		"max_reply":       `1000 from courier.toml:3`,
		"settle":          `"1s" from default`,
		"color":           `"never" from env NO_COLOR`,
		"keep_env":        `["AWS_PROFILE","GH_*"] from courier.toml:2`,
		"policy.ask":      `[] from default`,
		"policy.allow":    `["git push"] from courier.toml:7`,
		"agent.name":      `"command" from courier.toml:10`,
		"agent.command":   `["llm","-m","gpt 4o"] from flag --agent-command`,
		"agent.history":   `20000 from courier.toml:11`,
		"agent.stream":    `true from default`,
		"agent.max_turns": `12 from env COURIER_AGENT_MAX_TURNS`,
	}
	for _, s := range got.Settings {
		w, ok := want[s.Key]
		if !ok {
			continue
		}
		v, _ := json.Marshal(s.Value)
		if line := string(v) + " from " + relative(path, s.Source); line != w {
			t.Errorf("JSON %s = %s, want %s", s.Key, line, w)
		}
	}
}
