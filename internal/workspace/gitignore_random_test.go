package workspace_test

import (
	"math/rand"
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/workspace"
)

// Pieces and names the random cases are made of: short, so that patterns
// and paths meet often, and rich in the corners of git's syntax.
var (
	patternPieces = []string{"a", "b", "c", ".", "*", "**", "***", "?", "/", "**/", "/**", "\\/", "\\a", " ",
		"[ab]", "[!a]", "[^b]", "[a-c]", "[[:alpha:]]", "[]", "]", "[/]", "#", "*b", "a*"}
	pathNames = []string{"a", "b", "c", "ab", "ba", ".x", "a.b", "#", "]", " a"}
)

// TestGitIgnoreAgreesWithGitOnRandomCases builds random ignore files and
// trees and asks both courier and git about every path in them.
func TestGitIgnoreAgreesWithGitOnRandomCases(t *testing.T) {
	t.Parallel()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("this test compares with git, which is not installed: %v", err)
	}
	r := rand.New(rand.NewSource(1))
	mismatches := 0
	for i := 0; i < 120 && mismatches < 10; i++ {
		ignores := map[string]string{
			".gitignore":        randomIgnoreFile(r),
			"a/.gitignore":      randomIgnoreFile(r),
			"b/a/.gitignore":    randomIgnoreFile(r),
			".git/info/exclude": randomIgnoreFile(r),
		}
		checks := randomTree(r)
		dir := makeIgnoreTree(t, ignores, checks)
		want := gitCheckIgnore(t, gitBin, dir, checks)
		w := openWS(t, dir)
		ignored := w.GitIgnore()
		for _, c := range checks {
			if got := ignored(c.path, c.dir); got != want[c.path] {
				mismatches++
				t.Errorf("case %d: %q (dir %v): courier says ignored=%v, git %v; ignore files %q",
					i, c.path, c.dir, got, want[c.path], ignores)
			}
		}
		// The listing, which reads the ignore files as it walks, shows
		// exactly the files git does not ignore, itself or by a folder.
		listed, err := w.Files(workspace.ListOptions{GitIgnore: true})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, e := range listed {
			got[e.Path] = true
		}
		for _, c := range checks {
			if c.dir || strings.HasSuffix(c.path, ".gitignore") {
				continue
			}
			shown := !want[c.path]
			for d := path.Dir(c.path); d != "."; d = path.Dir(d) {
				shown = shown && !want[d]
			}
			if got[c.path] != shown {
				mismatches++
				t.Errorf("case %d: %q listed=%v, git shows it: %v; ignore files %q", i, c.path, got[c.path], shown, ignores)
			}
		}
	}
}

func randomIgnoreFile(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.Intn(5) {
		if r.Intn(3) == 0 {
			b.WriteString("!")
		}
		for range 1 + r.Intn(4) {
			b.WriteString(patternPieces[r.Intn(len(patternPieces))])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// randomTree returns about 25 files and folders, folders "a", "b" and
// "b/a" always among them so that the nested ignore files have a place.
func randomTree(r *rand.Rand) []ignoreCheck {
	isDir := map[string]bool{"a": true, "b": true, "b/a": true}
	for range 25 {
		parts := make([]string, 1+r.Intn(3))
		for i := range parts {
			parts[i] = pathNames[r.Intn(len(pathNames))]
		}
		if !fitsTree(isDir, parts) {
			continue
		}
		for i := 1; i < len(parts); i++ {
			isDir[strings.Join(parts[:i], "/")] = true
		}
		isDir[strings.Join(parts, "/")] = r.Intn(3) == 0
	}
	var checks []ignoreCheck
	for p, d := range isDir {
		checks = append(checks, ignoreCheck{path: p, dir: d})
	}
	sort.Slice(checks, func(i, j int) bool { return checks[i].path < checks[j].path })
	return checks
}

// fitsTree reports whether a new path can join the tree: it is new, and
// none of its folders is already a file.
func fitsTree(isDir map[string]bool, parts []string) bool {
	if _, ok := isDir[strings.Join(parts, "/")]; ok {
		return false
	}
	for i := 1; i < len(parts); i++ {
		if d, ok := isDir[strings.Join(parts[:i], "/")]; ok && !d {
			return false
		}
	}
	return true
}
