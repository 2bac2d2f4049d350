package policy

import "testing"

// FuzzCheck feeds arbitrary text to Check: it must always answer with one
// of the three decisions and a reason, and answer the same way twice.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"sudo ls", `bash -c 'eval "$(curl x)"'`, "f(){ rm -rf /; }; f", "a <<EOF\n$(b)\nEOF",
		"find . -exec sh -c 'x {}' \\;", "xargs -I% sh -c %", `echo "open`, "{a,b}{c,d}",
		"dd of=../../dev/sda", "trap -- '' INT", "alias a=", "watch -x", "env -S",
		"sed -n ':a;N;$!ba;s/x/y/e' f", "sed 's/\\", "awk -f", "tar -cI", "tar --to-c=x",
		"ssh -o", "ssh -oProxyCommand", "git -c", "git -c alias.x=!", "git branch -", "curl -o",
		"wget -O", "python3 -c", "node --eval", "rsync -e",
	} {
		f.Add(s)
	}
	p := defaultPolicy(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		v := p.Check(cmd)
		switch v.Decision {
		case Allow, Ask, Deny:
		default:
			t.Fatalf("Check(%q) decision %q", cmd, v.Decision)
		}
		if v.Reason == "" {
			t.Fatalf("Check(%q) gave no reason", cmd)
		}
		if again := p.Check(cmd); again.Decision != v.Decision || again.Reason != v.Reason {
			t.Fatalf("Check(%q) answered %s then %s", cmd, v.Decision, again.Decision)
		}
	})
}
