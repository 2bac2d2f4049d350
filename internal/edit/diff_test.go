package edit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	ten := numberedFile(10, nil)
	tests := []struct {
		name           string
		old, new       string
		want           string
		added, removed int
	}{
		{name: "equal texts", old: "a\n", new: "a\n", want: ""},
		{
			name:  "one changed line with context",
			old:   ten,
			new:   strings.Replace(ten, "line 5\n", "line five\n", 1),
			want:  "--- f.go\n+++ f.go\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n line 6\n line 7\n line 8\n",
			added: 1, removed: 1,
		},
		{
			name:  "lines added at the end",
			old:   "a\nb\n",
			new:   "a\nb\nc\nd\n",
			want:  "--- f.go\n+++ f.go\n@@ -1,2 +1,4 @@\n a\n b\n+c\n+d\n",
			added: 2,
		},
		{
			name: "distant changes make two hunks",
			old:  numberedFile(20, nil),
			new:  numberedFile(20, map[int]string{2: "two", 19: "nineteen"}),
			want: "--- f.go\n+++ f.go\n" +
				"@@ -1,5 +1,5 @@\n line 1\n-line 2\n+two\n line 3\n line 4\n line 5\n" +
				"@@ -16,5 +16,5 @@\n line 16\n line 17\n line 18\n-line 19\n+nineteen\n line 20\n",
			added: 2, removed: 2,
		},
		{
			name:  "changes six lines apart share a hunk",
			old:   numberedFile(12, nil),
			new:   numberedFile(12, map[int]string{3: "three", 10: "ten"}),
			want:  "--- f.go\n+++ f.go\n@@ -1,12 +1,12 @@\n line 1\n line 2\n-line 3\n+three\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n-line 10\n+ten\n line 11\n line 12\n",
			added: 2, removed: 2,
		},
		{
			name:  "old without final newline",
			old:   "a\nb",
			new:   "a\nb\n",
			want:  "--- f.go\n+++ f.go\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
			added: 1, removed: 1,
		},
		{
			name:  "new without final newline",
			old:   "a\nb\n",
			new:   "a\nc",
			want:  "--- f.go\n+++ f.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n",
			added: 1, removed: 1,
		},
		{
			name:  "both without final newline, change before the end",
			old:   "a\nb",
			new:   "x\nb",
			want:  "--- f.go\n+++ f.go\n@@ -1,2 +1,2 @@\n-a\n+x\n b\n\\ No newline at end of file\n",
			added: 1, removed: 1,
		},
		{
			name:  "created file",
			old:   "",
			new:   "a\nb\n",
			want:  "--- /dev/null\n+++ f.go\n@@ -0,0 +1,2 @@\n+a\n+b\n",
			added: 2,
		},
		{
			name:    "deleted file",
			old:     "a\n",
			new:     "",
			want:    "--- f.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
			removed: 1,
		},
		{
			name:  "CRLF lines are shown without CR",
			old:   "a\r\nb\r\n",
			new:   "a\r\nc\r\n",
			want:  "--- f.go\n+++ f.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
			added: 1, removed: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, added, removed := Diff("f.go", tt.old, tt.new, 0)
			if got != tt.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
			if added != tt.added || removed != tt.removed {
				t.Errorf("added, removed = %d, %d; want %d, %d", added, removed, tt.added, tt.removed)
			}
		})
	}
}

func TestDiffCap(t *testing.T) {
	old := numberedFile(100, nil)
	diff, added, removed := Diff("big.txt", old, "", 200)
	if added != 0 || removed != 100 {
		t.Errorf("added, removed = %d, %d; want 0, 100 for the whole diff", added, removed)
	}
	body, note, ok := strings.Cut(diff, "... diff cut: ")
	if !ok {
		t.Fatalf("no cut note in:\n%s", diff)
	}
	if len(body) > 200 {
		t.Errorf("%d bytes before the note, want at most 200", len(body))
	}
	shown := strings.Count(body, "\n")
	// 2 headers + 1 hunk header + 100 removed lines in all.
	if want := fmt.Sprintf("%d more lines\n", 103-shown); note != want {
		t.Errorf("note %q, want %q", note, want)
	}
	if !strings.HasPrefix(diff, "--- big.txt\n+++ /dev/null\n@@ -1,100 +0,0 @@\n-line 1\n") {
		t.Errorf("diff does not start with its headers:\n%s", diff)
	}
}

// lcsLen is the textbook quadratic LCS length, the reference for the
// Myers implementation.
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

// randomText makes up to n lines from a small alphabet, so lines repeat
// and the diff has real choices to make.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n + 1) {
		b.WriteString(string(rune('a'+r.IntN(4))) + "\n")
	}
	s := b.String()
	if s != "" && r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// TestDiffIsMinimalAndPatchApplies checks random pairs of texts: the diff
// removes and adds the fewest lines possible, and GNU patch turns the old
// text into the new one with it.
func TestDiffIsMinimalAndPatchApplies(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Fatalf("this test needs GNU patch: %v", err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for i := range 300 {
		old, new := randomText(r, 30), randomText(r, 30)
		if i%3 == 0 {
			new = mutate(r, old)
		}
		diff, added, removed := Diff("f.txt", old, new, 0)
		common := lcsLen(keysForTest(old), keysForTest(new))
		if removed != len(splitLines(old))-common || added != len(splitLines(new))-common {
			t.Fatalf("case %d: -%d +%d is not minimal (common %d)\nold %q\nnew %q\n%s", i, removed, added, common, old, new, diff)
		}
		if old == new {
			continue
		}
		oldPath := filepath.Join(dir, "old.txt")
		outPath := filepath.Join(dir, "out.txt")
		diffPath := filepath.Join(dir, "change.diff")
		for p, s := range map[string]string{oldPath: old, diffPath: diff} {
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(patch, "-s", "-o", outPath, oldPath, diffPath)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: patch: %v\n%s\nold %q\nnew %q\n%s", i, err, out, old, new, diff)
		}
		got, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != new {
			t.Fatalf("case %d: patched %q, want %q\n%s", i, got, new, diff)
		}
	}
}

// keysForTest gives lines the identity Diff uses: an unterminated last line
// differs from the same text with a newline.
func keysForTest(s string) []string {
	lines := splitLines(s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		lines[len(lines)-1] += "\x00"
	}
	return lines
}

// mutate changes a few lines of s, the way an edit does.
func mutate(r *rand.Rand, s string) string {
	lines := splitLines(s)
	for range r.IntN(3) + 1 {
		at := r.IntN(len(lines) + 1)
		switch r.IntN(3) {
		case 0:
			lines = append(lines[:at], append([]string{"new"}, lines[at:]...)...)
		case 1:
			if at < len(lines) {
				lines = append(lines[:at], lines[at+1:]...)
			}
		default:
			if at < len(lines) {
				lines[at] = "changed"
			}
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// BenchmarkDiffLargeFile diffs a 10,000-line file against itself with a few
// lines changed, inserted and removed in different places.
func BenchmarkDiffLargeFile(b *testing.B) {
	lines := bigFile()
	old := strings.Join(lines, "\n") + "\n"
	edited := append([]string(nil), lines...)
	edited[100] = "changed 100"
	edited[5000] = "changed 5000"
	edited = append(edited[:7000], append([]string{"inserted a", "inserted b"}, edited[7000:]...)...)
	edited = append(edited[:9000], edited[9010:]...)
	new := strings.Join(edited, "\n") + "\n"
	b.ReportAllocs()
	for b.Loop() {
		if _, added, removed := Diff("big.go", old, new, 0); added != 4 || removed != 12 {
			b.Fatalf("added %d removed %d", added, removed)
		}
	}
}

// BenchmarkDiffRewrite diffs two unrelated 10,000-line files, the worst case
// for the common-line search.
func BenchmarkDiffRewrite(b *testing.B) {
	lines := bigFile()
	old := strings.Join(lines[:5000], "\n") + "\n"
	rev := make([]string, 0, 5000)
	for i := len(lines) - 1; i >= 5000; i-- {
		rev = append(rev, strings.ToUpper(lines[i]))
	}
	new := strings.Join(rev, "\n") + "\n"
	b.ReportAllocs()
	for b.Loop() {
		Diff("big.go", old, new, 0)
	}
}
