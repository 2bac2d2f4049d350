package policy

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Programs parses a command as shell and returns every program it would
// start, in the order they appear in the text: in pipelines and lists, in
// substitutions, subshells, function bodies and compound commands, behind
// wrappers such as env, timeout, xargs and find -exec, and in code that is
// parsed again, such as bash -c strings and eval arguments.
//
// When some of the text cannot be parsed, the programs found elsewhere are
// returned with an error saying what could not be read.
func Programs(command string) ([]Invocation, error) {
	an := analyze(command)
	var errs []error
	for _, f := range an.findings {
		if f.check == checkUnparseable {
			errs = append(errs, errors.New(f.detail))
		}
	}
	return an.invs, errors.Join(errs...)
}

// args are the program's arguments after quote removal, computed ones as
// written.
func (inv Invocation) args() []string {
	var out []string
	for _, w := range inv.words[1:] {
		if !w.hidden {
			out = append(out, w.shown())
		}
	}
	return out
}

// String returns the program and its arguments separated by spaces.
func (inv Invocation) String() string {
	return strings.Join(append([]string{inv.Name}, inv.args()...), " ")
}

// shown renders invocations one per entry, as "name arg arg".
func shown(invs []Invocation) []string {
	out := make([]string, len(invs))
	for i, inv := range invs {
		out[i] = inv.String()
	}
	return out
}

func TestPrograms(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{`ls -la`, []string{"ls -la"}},
		{`git commit -m "fix the bug"`, []string{"git commit -m fix the bug"}},
		{`a | b && c; (d) || { e; }`, []string{"a", "b", "c", "d", "e"}},
		{`echo "$(date +%s)" $(whoami)`, []string{`echo "$(date +%s)" $(whoami)`, "date +%s", "whoami"}},
		{`env -i A=1 -u B timeout -k 3 10 nice -n 2 make -j4`, []string{"env -i A=1 -u B timeout -k 3 10 nice -n 2 make -j4", "timeout -k 3 10 nice -n 2 make -j4", "nice -n 2 make -j4", "make -j4"}},
		{`xargs -0 -n 1 grep -l x`, []string{"xargs -0 -n 1 grep -l x", "grep -l x"}},
		{`xargs`, []string{"xargs", "echo"}},
		{`find . -type f -exec wc -l {} \; -exec head -1 {} +`, []string{`find . -type f -exec wc -l {} ; -exec head -1 {} +`, "wc -l {}", "head -1 {}"}},
		{`bash -lc 'go build && ./app'`, []string{"bash -lc go build && ./app", "go build", "./app"}},
		{`sh -c "echo \"hi\""`, []string{`sh -c echo "hi"`, "echo hi"}},
		{`eval 'x=1; make'`, []string{"eval x=1; make", "make"}},
		{`command -v go`, []string{"command -v go"}},
		{`f() { go vet; }; f x`, []string{"go vet", "f x"}},
		{`for f in *.go; do gofmt -l "$f"; done`, []string{`gofmt -l "$f"`}},
		{`{a,b}x`, []string{"ax bx"}},
		{`cat <<'EOF' | wc -l` + "\n$(not run)\nEOF", []string{"cat", "wc -l"}},
		{`time go test`, []string{"go test"}},
		{`watch -n 5 'ls | wc -l'`, []string{"watch -n 5 ls | wc -l", "ls", "wc -l"}},
		{`alias ll='ls -l'`, []string{"alias ll=ls -l", "ls -l"}},
		{`trap 'rm -f "$tmp"' EXIT`, []string{`trap rm -f "$tmp" EXIT`, `rm -f "$tmp"`}},
	}
	for _, tt := range tests {
		invs, err := Programs(tt.cmd)
		if err != nil {
			t.Errorf("Programs(%q): %v", tt.cmd, err)
			continue
		}
		if got := shown(invs); !slices.Equal(got, tt.want) {
			t.Errorf("Programs(%q)\n got %q\nwant %q", tt.cmd, got, tt.want)
		}
	}
}

func TestProgramsFlags(t *testing.T) {
	invs, err := Programs(`f() { :; }; f; $CMD x; /usr/bin/env ls`)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name              string
		dynamic, function bool
	}{{":", false, false}, {"f", false, true}, {"$CMD", true, false}, {"/usr/bin/env", false, false}, {"ls", false, false}}
	if len(invs) != len(want) {
		t.Fatalf("Programs found %q; want %d programs", shown(invs), len(want))
	}
	for i, w := range want {
		if invs[i].Name != w.name || invs[i].Dynamic != w.dynamic || invs[i].Function != w.function {
			t.Errorf("program %d = %+v; want name %q dynamic %v function %v", i, invs[i], w.name, w.dynamic, w.function)
		}
	}
}

func TestProgramsParseError(t *testing.T) {
	tests := []struct {
		cmd      string
		found    []string
		errorHas string
	}{
		{`echo "open`, nil, "the command as shell: 1:6: reached EOF without closing quote"},
		{`make; sh -c 'if then'`, []string{"make", "sh -c if then"}, "the code for sh -c as shell: 1:"},
	}
	for _, tt := range tests {
		invs, err := Programs(tt.cmd)
		if err == nil || !strings.Contains(err.Error(), tt.errorHas) {
			t.Errorf("Programs(%q) error = %v; want one containing %q", tt.cmd, err, tt.errorHas)
		}
		if got := shown(invs); !slices.Equal(got, tt.found) {
			t.Errorf("Programs(%q) found %q; want %q", tt.cmd, got, tt.found)
		}
	}
}

// TestQuotingMatchesBash checks courier's quote removal against a real
// bash: for each word, bash prints the fields it makes of it with printf,
// which starts nothing else, and the policy must read the same program
// name and arguments.
func TestQuotingMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("this test compares with bash, which is not installed: %v", err)
	}
	words := []string{
		`s"u"do`, `\sudo`, `'su'"do"`, `$'\x73udo'`, `$'\163\165do'`, `"a\"b\$c\d"`,
		`{sudo,ls}`, `x{1..3}`, `"$'x'"`, `a\ b`, `'it'\''s'`, `"\\"`, `$"dq"`,
		`--opt=a\=b`, `\{a,b\}`, `"{a,b}"`,
	}
	for _, w := range words {
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", `printf '%s\n' `+w).Output()
		if err != nil {
			t.Fatalf("bash printf %s: %v", w, err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		invs, err := Programs(w)
		if err != nil || len(invs) == 0 {
			t.Errorf("Programs(%q) = %q, %v; want a program", w, shown(invs), err)
			continue
		}
		got := append([]string{invs[0].Name}, invs[0].args()...)
		if !slices.Equal(got, want) {
			t.Errorf("word %s: policy reads %q, bash %q", w, got, want)
		}
	}
}
