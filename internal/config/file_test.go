package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/courier-agent/courier/internal/policy"
)

func TestLoadFileValues(t *testing.T) {
	path := writeFile(t, `# courier settings
command_timeout = "2m30s"
max_output = 8000
copy = true
token_budget = 0          # never warn
max_reply = "1GB"
poll = true
settle = "250ms"
color = "Never"
sandbox = "strict"
network = false
keep_env = ["AWS_PROFILE", "GH_*"]
yes = true
list_limit = 50
read_lines = 2000
home = "Readable"
`)
	c := Defaults()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	want := Config{
		CommandTimeout: 150 * time.Second, MaxOutput: 8000, Copy: true, TokenBudget: 0,
		MaxReply: 1 << 30, Poll: true, Settle: 250 * time.Millisecond, Color: ColorNever,
		Sandbox: SandboxStrict, Network: false, Home: HomeReadable, KeepEnv: []string{"AWS_PROFILE", "GH_*"},
		Yes: true, ListLimit: 50, ReadLines: 2000,
		Agent: Defaults().Agent, // untouched by this file
	}
	if !equalConfig(*c, want) {
		t.Errorf("loaded %+v\nwant   %+v", *c, want)
	}
	for key, line := range map[string]string{"command_timeout": "2", "token_budget": "5", "read_lines": "15"} {
		if got, want := relative(path, string(c.Source(key))), "courier.toml:"+line; got != want {
			t.Errorf("Source(%q) = %q, want %q", key, got, want)
		}
	}
	if got := c.Source("policy.deny"); got != SourceDefault {
		t.Errorf("Source(policy.deny) = %q, want default", got)
	}
}

func TestLoadFileMissingIsFine(t *testing.T) {
	c := Defaults()
	if err := c.LoadFile(filepath.Join(t.TempDir(), "courier.toml")); err != nil {
		t.Fatalf("LoadFile of a missing file = %v, want nil", err)
	}
	if c.MaxOutput != 4000 || c.Source("max_output") != SourceDefault {
		t.Errorf("a missing file changed settings: %+v", *c)
	}
}

func TestLoadFileUnreadable(t *testing.T) {
	dir := t.TempDir() // a folder where the file should be
	err := Defaults().LoadFile(dir)
	if err == nil || !strings.HasPrefix(err.Error(), "read settings: ") {
		t.Fatalf("LoadFile(folder) = %v, want a read error", err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	// A want ending in "..." is a prefix: the rest is the policy
	// package's own words, which may grow.
	tests := []struct {
		name, file, want string
	}{
		{"syntax error with line and column", "copy = true\n\nmax_output = = 3\n",
			"courier.toml:3:14: expected value but found '=' instead"},
		{"unclosed string", "copy = true\ncolor = \"auto\n",
			"courier.toml:2:14: strings cannot contain newlines"},
		{"duplicate key", "copy = true\ncopy = false\n",
			"courier.toml:2:13: key 'copy' has already been defined"},
		{"unknown key with suggestion", "copy = true\n\ncomand_timeout = \"30s\"\n",
			"courier.toml:3: unknown setting 'comand_timeout'; did you mean 'command_timeout'?"},
		{"dashes for underscores", "max-output = 10\n",
			"courier.toml:1: unknown setting 'max-output'; did you mean 'max_output'?"},
		{"unknown key without suggestion", "verbosity = 3\n",
			"courier.toml:1: unknown setting 'verbosity'"},
		{"duration as a number", "copy = false\ncommand_timeout = 30\n",
			`courier.toml:2: command_timeout: want a duration like "45s", got 30`},
		{"bad duration", "settle = \"soon\"\n",
			`courier.toml:1: settle: want a duration like "45s", got "soon"`},
		{"zero duration", "command_timeout = \"0s\"\n",
			`courier.toml:1: command_timeout: want a duration above zero, got "0s"`},
		{"negative duration", "command_timeout = \"-5s\"\n",
			`courier.toml:1: command_timeout: want a duration above zero, got "-5s"`},
		{"date for a duration", "command_timeout = 1979-05-27\n",
			`courier.toml:1: command_timeout: want a duration like "45s", got a date or time`},
		{"negative max_output", "max_output = -3\n",
			"courier.toml:1: max_output: want a whole number of at least 1, got -3"},
		{"zero list_limit", "list_limit = 0\n",
			"courier.toml:1: list_limit: want a whole number of at least 1, got 0"},
		{"negative token_budget", "token_budget = -1\n",
			"courier.toml:1: token_budget: want a whole number of at least 0, got -1"},
		{"float for a whole number", "max_output = 4000.0\n",
			"courier.toml:1: max_output: want a whole number, got 4000.0"},
		{"string for a whole number", "read_lines = \"500\"\n",
			`courier.toml:1: read_lines: want a whole number, got "500"`},
		{"string for a bool", "copy = \"yes\"\n",
			`courier.toml:1: copy: want true or false, got "yes"`},
		{"bad color", "color = \"sometimes\"\n",
			`courier.toml:1: color: want one of "auto", "always", "never", got "sometimes"`},
		{"bad sandbox", "sandbox = \"on\"\n",
			`courier.toml:1: sandbox: want one of "auto", "strict", "off", got "on"`},
		{"bad size unit", "max_reply = \"20XB\"\n",
			`courier.toml:1: max_reply: want a size like "20MB", got "20XB"`},
		{"zero size", "max_reply = 0\n",
			"courier.toml:1: max_reply: want a size above zero, got 0"},
		{"size too large", "max_reply = \"9999999999GB\"\n",
			`courier.toml:1: max_reply: want a size like "20MB", got "9999999999GB"`},
		{"string for a list", "keep_env = \"AWS_PROFILE\"\n",
			`courier.toml:1: keep_env: want a list of strings like ["AWS_PROFILE"], got "AWS_PROFILE"`},
		{"number in a list", "keep_env = [\"A\", 2]\n",
			`courier.toml:1: keep_env: want a list of strings like ["AWS_PROFILE"], got ["A", 2]`},
		{"table for a setting", "[copy]\nx = 1\n",
			"courier.toml:1: copy: want true or false, got a table"},
		{"policy not a table", "policy = \"strict\"\n",
			`courier.toml:1: policy: want a table like [policy], got "strict"`},
		{"policy array of tables", "[[policy]]\ndeny = []\n",
			"courier.toml:1: policy: want a table like [policy], got an array of tables"},
		{"misspelt table", "[polcy]\ndeny = [\"curl\"]\n",
			"courier.toml:1: unknown setting 'polcy'; did you mean 'policy'?"},
		{"unknown policy key", "[policy]\ndeny = []\ndney = [\"curl\"]\n",
			"courier.toml:3: unknown setting 'policy.dney'; did you mean 'policy.deny'?"},
		{"policy key at the top", "deny = [\"curl\"]\n",
			"courier.toml:1: unknown setting 'deny'; did you mean 'deny' in the [policy] table?"},
		{"setting after the policy table", "[policy]\ndeny = [\"curl\"]\n\ncopy = true\n",
			"courier.toml:4: unknown setting 'policy.copy'; 'copy' goes above the [policy] table, as keys after a [table] line belong to it"},
		{"bad policy rule", "[policy]\nallow = [\"git status\"]\nask = [\n  \"git push\",\n  \"@nonsense\",\n]\n",
			"courier.toml:3: policy.ask: ask rule \"@nonsense\": invalid rule: unknown check @nonsense..."},
		{"empty policy rule", "[policy]\ndeny = [\"\"]\n",
			`courier.toml:2: policy.deny: want a list of rules like ["git push"], got [""]`},
		{"no_defaults not a bool", "[policy]\nno_defaults = 1\n",
			"courier.toml:2: policy.no_defaults: want true or false, got 1"},
		{"every problem in file order", "max_output = -3\ncopy = true\nyes = \"no\"\n[policy]\nask = 3\n",
			"courier.toml:1: max_output: want a whole number of at least 1, got -3\n" +
				"courier.toml:3: yes: want true or false, got \"no\"\n" +
				"courier.toml:5: policy.ask: want a list of rules like [\"git push\"], got 3"},
		{"at most ten problems", unknownKeys(12), unknownKeysError(10) + "\ncourier.toml: 2 more problems"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file)
			c := Defaults()
			err := c.LoadFile(path)
			got := relative(path, errText(err))
			prefix, cut := strings.CutSuffix(tt.want, "...")
			if got != tt.want && !(cut && strings.HasPrefix(got, prefix)) {
				t.Errorf("LoadFile error =\n%s\nwant\n%s", got, tt.want)
			}
			if !equalConfig(*c, *Defaults()) {
				t.Errorf("a file with errors changed settings: %+v", *c)
			}
		})
	}
}

func TestSyntaxErrorKeepsTOMLError(t *testing.T) {
	path := writeFile(t, "copy = \n")
	err := Defaults().LoadFile(path)
	var pe toml.ParseError
	if !errors.As(err, &pe) || pe.Position.Line != 1 {
		t.Fatalf("LoadFile error %v does not wrap a toml.ParseError of line 1", err)
	}
}

func TestPolicyTable(t *testing.T) {
	tests := []struct {
		name, file string
		want       policy.Config
	}{
		{"table", `
[policy]
deny = ["curl # no downloads here"]
ask = ["make deploy"]
allow = ["git push"]
no_defaults = false
`, policy.Config{Deny: []string{"curl # no downloads here"}, Ask: []string{"make deploy"}, Allow: []string{"git push"}}},
		{"inline table", `policy = { allow = ["git push"], no_defaults = true }`,
			policy.Config{Allow: []string{"git push"}, NoDefaults: true}},
		{"dotted keys", `policy.deny = ["curl"]`, policy.Config{Deny: []string{"curl"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file)
			c := Defaults()
			if err := c.LoadFile(path); err != nil {
				t.Fatal(err)
			}
			want := *Defaults()
			want.Policy = tt.want
			if !equalConfig(*c, want) {
				t.Fatalf("policy = %+v, want %+v", c.Policy, tt.want)
			}
		})
	}
}

// TestPolicyTableDecides checks that the decoded table is what the policy
// package expects: its rules decide over the built-in ones.
func TestPolicyTableDecides(t *testing.T) {
	path := writeFile(t, "[policy]\ndeny = [\"curl # no downloads here\"]\nallow = [\"git push\"]\n")
	c := Defaults()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(c.Policy)
	if err != nil {
		t.Fatal(err)
	}
	for command, want := range map[string]policy.Decision{
		"curl https://example.com": policy.Deny,
		"git push origin main":     policy.Allow,
		"sudo ls":                  policy.Deny,
	} {
		if got := p.Check(command).Decision; got != want {
			t.Errorf("Check(%q) = %s, want %s", command, got, want)
		}
	}
}

func TestLoadFileSourcesInsideTables(t *testing.T) {
	path := writeFile(t, "copy = true\n\n[policy]\nask = [\n  \"make\",\n]\nno_defaults = true\n")
	c := Defaults()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]Source{"copy": "courier.toml:1", "policy.ask": "courier.toml:4", "policy.no_defaults": "courier.toml:7"} {
		if got := Source(relative(path, string(c.Source(key)))); got != want {
			t.Errorf("Source(%q) = %q, want %q", key, got, want)
		}
	}
	if !slices.Equal(c.Policy.Ask, []string{"make"}) || !c.Policy.NoDefaults {
		t.Errorf("policy = %+v", c.Policy)
	}
}

// unknownKeys is a file of n unknown settings, k1 to kn.
func unknownKeys(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "k%d = %d\n", i, i)
	}
	return b.String()
}

// unknownKeysError is the report of the first n keys of unknownKeys.
func unknownKeysError(n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("courier.toml:%d: unknown setting 'k%d'", i+1, i+1)
	}
	return strings.Join(lines, "\n")
}
