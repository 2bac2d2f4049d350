package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"
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
			if _, err := w.List(workspace.ListOptions{MaxEntries: 500, Ignore: w.GitIgnore()}); err != nil {
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
