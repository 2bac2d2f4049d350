package workspace_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/courier-agent/courier/internal/workspace"
)

// The listing of a request must cost about what walking the tree costs:
// these benchmarks list real trees next to `find DIR -type f` on the same
// tree, so the ratio of the "courier" and "find" sub-benchmarks is the
// figure that matters (make bench prints it). Measured on a loaded 2-core
// machine; see the package's benchmark notes in make bench's table.

// goSrc is the tree people know: a copy of Go's own src folder.
func goSrc(b *testing.B) string {
	b.Helper()
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no Go source tree at %s to copy: %v", src, err)
	}
	dir := filepath.Join(b.TempDir(), "src")
	if out, err := exec.Command("cp", "-r", src, dir).CombinedOutput(); err != nil {
		b.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	return dir
}

// wideTree writes n small files, 100 to a folder, in folders 100 to a
// parent: the shape of a large monorepo.
func wideTree(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/10000), fmt.Sprintf("p%03d", i/100%100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", i%100)), []byte("package p\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// deepChain nests depth folders, one in the other, each holding one file.
func deepChain(b *testing.B, depth int) string {
	b.Helper()
	dir := b.TempDir()
	if err := makeChain(dir, depth); err != nil {
		b.Fatalf("make a %d-deep chain: %v", depth, err)
	}
	return dir
}

// makeChain creates the chain level by level, each relative to the last,
// since the whole path is longer than the kernel takes in one call.
func makeChain(dir string, depth int) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	for range depth {
		if err := r.Mkdir("d", 0o755); err != nil {
			r.Close()
			return err
		}
		if err := r.WriteFile("d/f", []byte("x\n"), 0o644); err != nil {
			r.Close()
			return err
		}
		next, err := r.OpenRoot("d")
		r.Close()
		if err != nil {
			return err
		}
		r = next
	}
	return r.Close()
}

// benchListing lists dir as a request does, next to find on the same tree.
func benchListing(b *testing.B, dir string) {
	w, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.Run("courier", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.List(workspace.ListOptions{MaxEntries: 300, GitIgnore: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("find", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("find", dir, "-type", "f")
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkListGoSrc lists a copy of Go's src (about 11,500 files).
func BenchmarkListGoSrc(b *testing.B) { benchListing(b, goSrc(b)) }

// BenchmarkList100k lists a 100,000-file tree.
func BenchmarkList100k(b *testing.B) { benchListing(b, wideTree(b, 100_000)) }

// BenchmarkListDepth lists chains of folders nested ever deeper: the time
// per entry (ns/entry) must stay flat as the depth grows.
func BenchmarkListDepth(b *testing.B) {
	for _, depth := range []int{625, 1250, 2500, 5000} {
		dir := deepChain(b, depth)
		w, err := workspace.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.List(workspace.ListOptions{MaxEntries: 300, GitIgnore: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*depth), "ns/entry")
		})
		w.Close()
	}
}
