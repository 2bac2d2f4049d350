package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkNew is 'courier new --no-watch' in a project of a thousand files
// in a git repository, as a person runs it: the first request written, its
// environment section included, in the sandbox. "tools kept" is every
// 'new' but the first on a machine (the goal: well under 150 ms), "tools
// probed" the first, which waits for every tool to say its version.
func BenchmarkNew(b *testing.B) {
	root := b.TempDir()
	ws := filepath.Join(root, "workspace")
	for i := range 1000 {
		p := filepath.Join(ws, fmt.Sprintf("pkg%02d", i%50), fmt.Sprintf("file%d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package pkg\n\nfunc F() {}\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	git := exec.Command("sh", "-c", "git init -q && git add -A && git -c user.name=b -c user.email=b@example.com commit -qm files")
	git.Dir = ws
	if out, err := git.CombinedOutput(); err != nil {
		b.Fatalf("git: %v\n%s", err, out)
	}
	newSession := func(b *testing.B) {
		if code := Main(context.Background(), []string{"--root", root, "new", "--no-watch", "add a flag"},
			&IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv, Environ: os.Environ()}); code != 0 {
			b.Fatalf("courier new: exit %d", code)
		}
	}
	b.Run("tools kept", func(b *testing.B) {
		b.Setenv("XDG_CACHE_HOME", b.TempDir())
		newSession(b)
		for b.Loop() {
			newSession(b)
		}
	})
	b.Run("tools probed", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			b.Setenv("XDG_CACHE_HOME", b.TempDir())
			b.StartTimer()
			newSession(b)
		}
	})
}
