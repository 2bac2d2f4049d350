package workspace_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/workspace"
)

// hugeIgnore is a .gitignore of about 25 MB: 1.6 million patterns
// "pattern-0000000" and so on.
func hugeIgnore() string {
	var b strings.Builder
	for i := 0; b.Len() < 25<<20; i++ {
		fmt.Fprintf(&b, "pattern-%07d\n", i)
	}
	return b.String()
}

// An ignore file past courier's bounds (1 MB, 10,000 patterns, lines of
// 4,096 bytes) is used up to them: what lies beyond ignores nothing, and
// the listing tells of the file once, with the patterns it used.
func TestIgnoreFileBounds(t *testing.T) {
	t.Parallel()
	longLine := strings.Repeat("x", 5000) + "\n"
	// 1,100 lines of a kilobyte: the first MB holds 1,024 of them.
	var kilo strings.Builder
	for i := range 1100 {
		fmt.Fprintf(&kilo, "k%04d-%s\n", i, strings.Repeat("*", 1017))
	}
	cases := []struct {
		name   string
		files  map[string]string
		listed []string // among the files, those the listing shows
		cut    string   // the ignore file told of, "" for none
		used   int
	}{{
		name:   "25 MB of patterns",
		files:  map[string]string{".gitignore": hugeIgnore(), "pattern-0000001": "", "pattern-0009999": "", "pattern-0010000": "", "pattern-1000000": ""},
		listed: []string{".gitignore", "pattern-0010000", "pattern-1000000"},
		cut:    ".gitignore",
		used:   10_000,
	}, {
		name:   "a line too long is skipped",
		files:  map[string]string{".gitignore": longLine + "secret.txt\n", strings.Repeat("x", 255): "", "secret.txt": ""},
		listed: []string{".gitignore", strings.Repeat("x", 255)},
		cut:    ".gitignore",
		used:   1,
	}, {
		name:   "the first megabyte of a nested file",
		files:  map[string]string{"sub/.gitignore": kilo.String() + "late.txt\n", "sub/k0001-a": "", "sub/k1023-a": "", "sub/k1024-a": "", "sub/late.txt": ""},
		listed: []string{"sub/.gitignore", "sub/k1024-a", "sub/late.txt"},
		cut:    "sub/.gitignore",
		used:   1024,
	}, {
		name:   ".git/info/exclude",
		files:  map[string]string{".git/info/exclude": hugeIgnore(), "pattern-0000001": "", "pattern-0010000": ""},
		listed: []string{"pattern-0010000"},
		cut:    ".git/info/exclude",
		used:   10_000,
	}, {
		name:   "within the bounds",
		files:  map[string]string{".gitignore": "*.log\n", "a.log": "", "a.go": ""},
		listed: []string{".gitignore", "a.go"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeTree(t, dir, tc.files)
			w := openWS(t, dir)
			var cuts []string
			entries, err := w.List(workspace.ListOptions{GitIgnore: true, IgnoreCut: func(p string, n int) {
				cuts = append(cuts, fmt.Sprintf("%s %d", p, n))
			}})
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, e := range entries {
				listed = append(listed, e.Path)
			}
			if !slices.Equal(listed, tc.listed) {
				t.Errorf("listed %q, want %q", listed, tc.listed)
			}
			var want []string
			if tc.cut != "" {
				want = []string{fmt.Sprintf("%s %d", tc.cut, tc.used)}
			}
			if !slices.Equal(cuts, want) {
				t.Errorf("told of %q, want %q", cuts, want)
			}
			// Snapshots decide by the same rules.
			ignored := w.GitIgnore()
			for p := range tc.files {
				if want := !slices.Contains(tc.listed, p) && !strings.HasPrefix(p, ".git/"); ignored(p, false) != want {
					t.Errorf("GitIgnore says %s is ignored: %v", p, !want)
				}
			}
		})
	}
}

// Patterns built to make a backtracking matcher take exponential time
// (many stars, many "**", as long as a line may be) are matched in a
// moment: the matcher keeps one point to come back to per level.
func TestIgnoreMatchHostilePatterns(t *testing.T) {
	t.Parallel()
	cases := []struct{ pattern, path string }{
		{strings.Repeat("*a", 2000) + "b", strings.Repeat("a", 4000)},
		{"*" + strings.Repeat("a", 4000) + "b", strings.Repeat("a", 4090)},
		{strings.Repeat("**/a*", 800) + "b", strings.Repeat("a/", 2000) + "c"},
		{strings.Repeat("?*", 2000) + "[!a]", strings.Repeat("a", 4000)},
	}
	for _, c := range cases {
		p, err := workspace.CompilePatterns([]string{c.pattern})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if p.Match(c.path, false) {
			t.Errorf("%.20s... matches", c.pattern)
		}
		// Exponential time would be years; linear in the pattern times
		// the path is a few milliseconds.
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%.20s... took %v", c.pattern, d)
		}
	}
}
