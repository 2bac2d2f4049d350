package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestConfigOverridesDefaults(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		cases []checkCase
	}{
		{"allow git push", Config{Allow: []string{"git push"}}, []checkCase{
			{`git push origin main`, Allow, "`git push origin main` is allowed: matches your rule \"git push\""},
			// Allow rules need a sure match: this word may be --no-pager's value.
			{`git --no-pager push`, Ask, "publishes commits"},
			{`git reset --hard`, Ask, "discards"},
		}},
		{"deny curl", Config{Deny: []string{"curl"}}, []checkCase{
			{`curl -s https://example.com`, Deny, "`curl` is denied: matches your rule \"curl\""},
			{`echo curl`, Allow, ""},
		}},
		{"ask with description", Config{Ask: []string{"npm install   # adds packages from the network"}}, []checkCase{
			{`npm install left-pad`, Ask, "`npm install left-pad` needs approval: adds packages from the network"},
			{`npm ci`, Allow, ""},
		}},
		{"allow a whole program", Config{Allow: []string{"rm"}}, []checkCase{
			{`rm -rf build`, Allow, "matches your rule \"rm\""},
		}},
		{"most severe of the config wins", Config{Deny: []string{"git"}, Allow: []string{"git status"}}, []checkCase{
			{`git status`, Deny, "matches your rule \"git\""},
		}},
		{"glob program", Config{Deny: []string{"terraform*"}}, []checkCase{
			{`terraform-1.5 apply`, Deny, "`terraform-1.5` is denied"},
			{`terra apply`, Allow, ""},
		}},
		{"path program", Config{Deny: []string{"./deploy.sh"}}, []checkCase{
			{`./deploy.sh prod`, Deny, "`./deploy.sh` is denied"},
			{`deploy.sh prod`, Deny, "`deploy.sh` is denied"},
			{`scripts/deploy.sh prod`, Allow, ""},
		}},
		{"operand patterns", Config{Ask: []string{"docker run *:latest"}}, []checkCase{
			{`docker run --rm -it alpine:latest sh`, Ask, "matches your rule \"docker run *:latest\""},
			{`docker run alpine:3.19`, Allow, ""},
		}},
		{"long option and abbreviation", Config{Ask: []string{"git push --force"}, Allow: []string{"git push"}}, []checkCase{
			{`git push --force-with-lease`, Allow, ""},
			{`git push --force`, Ask, "matches your rule \"git push --force\""},
			{`git push --forc`, Ask, "git push --force"},
			{`git push origin`, Allow, ""},
		}},
		{"checks move between lists", Config{Allow: []string{"@dynamic"}, Deny: []string{"@download"}}, []checkCase{
			{`$CMD x`, Allow, ""},
			{`curl x | sh`, Deny, "runs code downloaded from the network"},
		}},
		{"allow sudo", Config{Allow: []string{"sudo"}}, []checkCase{
			{`sudo ls`, Allow, "matches your rule \"sudo\""},
			{`sudo mkfs.ext4 /dev/sdz`, Deny, "`mkfs.ext4` is denied"},
		}},
		{"no defaults", Config{NoDefaults: true, Ask: []string{"make"}}, []checkCase{
			{`sudo ls`, Allow, ""},
			{`echo hi > /dev/sda`, Allow, ""},
			{`make test`, Ask, "matches your rule \"make\""},
		}},
		{"defaults as config change nothing", Default(), []checkCase{
			{`sudo ls`, Deny, "privilege escalation"},
			{`rm -rf x`, Ask, "recursive or forced delete"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			runChecks(t, p, tt.cases)
		})
	}
}

func TestInvalidRules(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Deny: []string{""}}, `deny rule "": invalid rule: no program in it`},
		{Config{Ask: []string{"  # only a comment"}}, `ask rule "  # only a comment": invalid rule: no program in it`},
		{Config{Deny: []string{"sudo", "sud[z-a]"}}, `deny rule "sud[z-a]": invalid rule: bad pattern "sud[z-a]": invalid range: z-a`},
		{Config{Allow: []string{"-rf"}}, "it starts with an option, not a program"},
		{Config{Ask: []string{"git --"}}, `"--" is not an option a rule can match`},
		{Config{Ask: []string{"git push --force=yes"}}, `"--force=yes" is not an option a rule can match`},
		{Config{Deny: []string{"@network"}}, "unknown check @network (known: @device, @device-write, @download, @dynamic, @git-write, @runs-code, @unparseable)"},
		{Config{Deny: []string{"@dynamic x"}}, "check @dynamic takes no arguments"},
		{Config{Ask: []string{`git push x\`}}, `bad pattern "x\\": \ at end of pattern`},
		{Config{Allow: []string{"ls [[:nope:]]"}}, `bad pattern "[[:nope:]]"`},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if err == nil {
			t.Errorf("New(%+v) succeeded; want an error containing %q", tt.cfg, tt.want)
			continue
		}
		if !errors.Is(err, ErrInvalidRule) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v; want an ErrInvalidRule containing %q", tt.cfg, err, tt.want)
		}
	}
}

func TestConfigFromTOML(t *testing.T) {
	file := filepath.Join(t.TempDir(), "courier.toml")
	text := `[policy]
deny = ["curl # no network in this project"]
ask = ["go generate"]
allow = ["git push", "@unparseable"]
`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Policy Config `toml:"policy"`
	}
	if _, err := toml.DecodeFile(file, &doc); err != nil {
		t.Fatalf("decode: %v", err)
	}
	p, err := New(doc.Policy)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	runChecks(t, p, []checkCase{
		{`curl -O https://example.com/x.tgz`, Deny, "`curl` is denied: no network in this project"},
		{`go generate ./...`, Ask, "matches your rule \"go generate\""},
		{`git push`, Allow, ""},
		{`echo "open`, Allow, ""},
		{`sudo ls`, Deny, "privilege escalation"},
	})
}

func TestDefaultIsACopy(t *testing.T) {
	d := Default()
	d.Deny[0] = "ls"
	if got := Default().Deny[0]; got == "ls" {
		t.Fatalf("changing Default's result changed the built-in rules")
	}
	if v := defaultPolicy(t).Check("ls"); v.Decision != Allow {
		t.Errorf("ls = %s after changing a copy of the defaults; want allow", v.Decision)
	}
}
