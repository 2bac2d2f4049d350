package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/workspace"
)

// makeBigTree writes 20,000 small files in 100 folders of 200, with a root
// and a nested .gitignore that hide about a fifth of them.
func makeBigTree(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	writeTree(b, dir, map[string]string{
		".gitignore":       "# generated\n*.log\n/pkg0*/\nbuild/\n**/tmp/**\n!keep.log\n*.o\n[Tt]humbs.db\n",
		"pkg50/.gitignore": "*.txt\n!important.txt\n",
	})
	exts := []string{".go", ".go", ".txt", ".log", ".md"}
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 200 {
			name := filepath.Join(sub, fmt.Sprintf("file%03d%s", f, exts[f%len(exts)]))
			if err := os.WriteFile(name, []byte("package x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return dir
}

func BenchmarkList20k(b *testing.B) {
	dir := makeBigTree(b)
	w, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.List(workspace.ListOptions{MaxEntries: 500}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gitignore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.List(workspace.ListOptions{MaxEntries: 500, GitIgnore: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGitIgnoreMatch is the matcher alone, on paths already walked.
func BenchmarkGitIgnoreMatch(b *testing.B) {
	dir := makeBigTree(b)
	w, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ignored := w.GitIgnore()
	var paths []string
	for d := range 100 {
		for f := range 200 {
			paths = append(paths, fmt.Sprintf("pkg%02d/file%03d.go", d, f))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range paths {
			ignored(p, false)
		}
	}
}

// BenchmarkListHugeGitignore is a turn's listing of a workspace of 200
// files whose .gitignore is 25 MB: of plain names, and of patterns made to
// cost the matcher the most (stars, "**", names of 200 bytes). Courier uses
// the first 10,000 patterns.
func BenchmarkListHugeGitignore(b *testing.B) {
	hostile := strings.Repeat("*a", 50) + "b\n" + strings.Repeat("**/a*", 20) + "/b\n"
	for _, c := range []struct{ name, line string }{{"plain", ""}, {"hostile", hostile}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			var ignore strings.Builder
			for i := 0; ignore.Len() < 25<<20; i++ {
				if c.line != "" {
					ignore.WriteString(c.line)
				} else {
					fmt.Fprintf(&ignore, "pattern-%07d\n", i)
				}
			}
			files := map[string]string{".gitignore": ignore.String()}
			for i := range 200 {
				files[fmt.Sprintf("d%d/%s%03d", i%10, strings.Repeat("a", 200), i)] = ""
			}
			writeTree(b, dir, files)
			w := openWS(b, dir)
			for b.Loop() {
				if _, err := w.List(workspace.ListOptions{MaxEntries: 300, GitIgnore: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
