package config

import (
	"strings"
	"testing"
)

// FuzzLoadFile checks that no file makes loading panic, that a file with
// errors changes nothing, and that what loads prints back to a file giving
// the same settings.
func FuzzLoadFile(f *testing.F) {
	for _, seed := range []string{
		"copy = true\nmax_reply = \"512KB\"\n",
		"keep_env = [\"A\", \"B\"]\n[policy]\ndeny = [\"curl\"]\n",
		"policy = { allow = [\"git push\"] }\n",
		"command_timeout = 30\n",
		"[[policy]]\n",
		"max_output = = 1\n",
		"\"quo,ted\" = 1\n",
		"[agent]\nname = \"claude\"\ncommand = [\"claude\", \"--tools\", \"\"]\nhistory = 5000\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		c := Defaults()
		if err := c.loadTOML("courier.toml", data); err != nil {
			if !equalConfig(*c, *Defaults()) {
				t.Fatalf("failed load changed settings: %v", err)
			}
			return
		}
		var b strings.Builder
		if err := c.Print(&b); err != nil {
			t.Fatal(err)
		}
		back := Defaults()
		if err := back.loadTOML("printed.toml", b.String()); err != nil {
			t.Fatalf("printed settings do not load: %v\n%s", err, b.String())
		}
		if !equalConfig(*back, *c) {
			t.Fatalf("printed settings load differently:\n%s", b.String())
		}
	})
}
