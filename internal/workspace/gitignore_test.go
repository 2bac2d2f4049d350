package workspace_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type ignoreCheck struct {
	path string
	dir  bool
	want bool
}

// ignoreCases are ignore files and paths with git's verdict on each; the
// test below checks courier against the table and the table against git.
var ignoreCases = []struct {
	name    string
	ignores map[string]string
	checks  []ignoreCheck
}{
	{
		name:    "comments blank lines and plain patterns",
		ignores: map[string]string{".gitignore": "# build output\n\n*.log\nbuild/\n/root.txt\ndoc/*.txt\ndoc/frotz/\n"},
		checks: []ignoreCheck{
			{path: "a.log", want: true},
			{path: "sub/deep/b.log", want: true},
			{path: "a.logx", want: false},
			{path: "# build output", want: false},
			{path: "build", dir: true, want: true},
			{path: "sub/build", dir: true, want: true},
			{path: "out/build", want: false},
			{path: "root.txt", want: true},
			{path: "sub/root.txt", want: false},
			{path: "doc/a.txt", want: true},
			{path: "doc/sub/a.txt", want: false},
			{path: "x/doc/b.txt", want: false},
			{path: "doc/frotz", dir: true, want: true},
			{path: "a/doc/frotz", dir: true, want: false},
		},
	},
	{
		name:    "escapes and trailing spaces",
		ignores: map[string]string{".gitignore": "\\#hash\n\\!bang\ntrail   \nkeep\\ \ntab\t\n   \n"},
		checks: []ignoreCheck{
			{path: "#hash", want: true},
			{path: "!bang", want: true},
			{path: "bang", want: false},
			{path: "trail", want: true},
			{path: "trail ", want: false},
			{path: "keep ", want: true},
			{path: "keep", want: false},
			{path: "tab", want: false},
		},
	},
	{
		name:    "negation and last match wins",
		ignores: map[string]string{".gitignore": "*.log\n!important.log\n!a.txt\n*.txt\n"},
		checks: []ignoreCheck{
			{path: "x.log", want: true},
			{path: "important.log", want: false},
			{path: "sub/important.log", want: false},
			{path: "a.txt", want: true},
		},
	},
	{
		name:    "nothing is re-included below an ignored folder",
		ignores: map[string]string{".gitignore": "build/\n!build/keep.txt\nlogs/*\n!logs/keep.txt\n!logs/sub/keep.txt\n"},
		checks: []ignoreCheck{
			{path: "build/keep.txt", want: true},
			{path: "logs", dir: true, want: false},
			{path: "logs/keep.txt", want: false},
			{path: "logs/other.txt", want: true},
			{path: "logs/sub/keep.txt", want: true},
		},
	},
	{
		name:    "double stars",
		ignores: map[string]string{".gitignore": "**/cache\nlib/**\n!lib/keep\na/**/z\nx**y\n"},
		checks: []ignoreCheck{
			{path: "cache", dir: true, want: true},
			{path: "p/q/cache", want: true},
			{path: "lib", dir: true, want: false},
			{path: "lib/x", want: true},
			{path: "lib/m/n", want: true},
			{path: "lib/keep", want: false},
			{path: "a/z", want: true},
			{path: "a/b/c/z", want: true},
			{path: "b/a/z", want: false},
			{path: "xaby", want: true},
			{path: "sub/xy", want: true},
		},
	},
	{
		name:    "wildcards and ranges",
		ignores: map[string]string{".gitignore": "file?.txt\n[abc].md\n[!x]y.go\nr[0-9][0-9].csv\n[[:upper:]]*.c\n[]z]q\nbad[\n"},
		checks: []ignoreCheck{
			{path: "file1.txt", want: true},
			{path: "file10.txt", want: false},
			{path: "b.md", want: true},
			{path: "d.md", want: false},
			{path: "ay.go", want: true},
			{path: "xy.go", want: false},
			{path: "r42.csv", want: true},
			{path: "r4x.csv", want: false},
			{path: "Main.c", want: true},
			{path: "main.c", want: false},
			{path: "]q", want: true},
			{path: "zq", want: true},
			{path: "bad[", want: false},
		},
	},
	{
		name: "nested files apply to their folder and below",
		ignores: map[string]string{
			".gitignore":             "*.tmp\n",
			"sub/.gitignore":         "!keep.tmp\n/local\n*.o\n",
			"sub/deeper/.gitignore":  "!x.o\n",
			"other/.gitignore":       "*\n",
			"other/inner/.gitignore": "!*\n",
		},
		checks: []ignoreCheck{
			{path: "keep.tmp", want: true},
			{path: "sub/keep.tmp", want: false},
			{path: "sub/other.tmp", want: true},
			{path: "sub/local", want: true},
			{path: "sub/x/local", want: false},
			{path: "local", want: false},
			{path: "sub/a.o", want: true},
			{path: "sub/deeper/x.o", want: false},
			{path: "sub/deeper/y.o", want: true},
			{path: "a.o", want: false},
			{path: "other/inner/file", want: true},
		},
	},
	{
		name: "info/exclude is below every .gitignore",
		ignores: map[string]string{
			".git/info/exclude": "*.secret\nnotes/\n",
			".gitignore":        "!keep.secret\n",
		},
		checks: []ignoreCheck{
			{path: "a.secret", want: true},
			{path: "keep.secret", want: false},
			{path: "notes", dir: true, want: true},
		},
	},
	{
		name:    "allow-list of go files",
		ignores: map[string]string{".gitignore": "*\n!*/\n!*.go\n"},
		checks: []ignoreCheck{
			{path: "main.go", want: false},
			{path: "notes.txt", want: true},
			{path: "src", dir: true, want: false},
			{path: "src/lib.go", want: false},
			{path: "src/readme", want: true},
		},
	},
	{
		name:    "folder re-included and CRLF lines",
		ignores: map[string]string{".gitignore": "out/\r\n!out/\r\n*.bak\r\n"},
		checks: []ignoreCheck{
			{path: "out", dir: true, want: false},
			{path: "out/a", want: false},
			{path: "x.bak", want: true},
		},
	},
}

// makeIgnoreTree writes a case's ignore files and its paths as real files
// and folders, with an empty git repository around them.
func makeIgnoreTree(t *testing.T, ignores map[string]string, checks []ignoreCheck) string {
	t.Helper()
	dir := t.TempDir()
	tree := map[string]string{".git/": ""}
	for p, c := range ignores {
		tree[p] = c
	}
	for _, c := range checks {
		if c.dir {
			tree[c.path+"/"] = ""
		} else {
			tree[c.path] = "x"
		}
	}
	writeTree(t, dir, tree)
	return dir
}

func TestGitIgnore(t *testing.T) {
	n := 0
	for _, tc := range ignoreCases {
		t.Run(tc.name, func(t *testing.T) {
			w := openWS(t, makeIgnoreTree(t, tc.ignores, tc.checks))
			ignored := w.GitIgnore()
			for _, c := range tc.checks {
				if got := ignored(c.path, c.dir); got != c.want {
					t.Errorf("ignored(%q, dir=%v) = %v, want %v", c.path, c.dir, got, c.want)
				}
			}
		})
		n += len(tc.checks)
	}
	if n < 30 {
		t.Fatalf("only %d cases", n)
	}
}

// TestGitIgnoreTableAgreesWithGit asks git itself about every case, so the
// expectations above are git's and not a guess.
func TestGitIgnoreTableAgreesWithGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("this test checks the table against git, which is not installed: %v", err)
	}
	for _, tc := range ignoreCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeIgnoreTree(t, tc.ignores, tc.checks)
			got := gitCheckIgnore(t, gitBin, dir, tc.checks)
			for _, c := range tc.checks {
				if got[c.path] != c.want {
					t.Errorf("git says %q ignored=%v, table says %v", c.path, got[c.path], c.want)
				}
			}
		})
	}
}

// gitCheckIgnore runs git check-ignore on the checks' paths in dir, with
// no user or system configuration, and returns which are ignored.
func gitCheckIgnore(t *testing.T, gitBin, dir string, checks []ignoreCheck) map[string]bool {
	t.Helper()
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, "none"))
	exclude := filepath.Join(dir, ".git", "info", "exclude")
	saved, readErr := os.ReadFile(exclude)
	init := exec.Command(gitBin, "init", "-q", dir)
	init.Env = env
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// git init writes its own sample exclude file; put the case's back.
	if readErr == nil {
		if err := os.WriteFile(exclude, saved, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var in bytes.Buffer
	for _, c := range checks {
		in.WriteString(c.path + "\x00")
	}
	cmd := exec.Command(gitBin, "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, &in
	out, err := cmd.Output()
	// Exit status 1 only says that no path is ignored.
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		t.Fatalf("git check-ignore: %v", err)
	}
	// Records are source, line, pattern, path; a match of a "!" pattern is
	// a re-inclusion.
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	got := map[string]bool{}
	for i := 0; i+3 < len(f); i += 4 {
		got[f[i+3]] = f[i] != "" && !strings.HasPrefix(f[i+2], "!")
	}
	return got
}
