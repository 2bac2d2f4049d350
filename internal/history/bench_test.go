//go:build unix

package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// makeTree writes n small source-like files of about 250 bytes, each
// content distinct as in a real tree, 100 per folder, two levels deep,
// with a .gitignore and an ignored build folder.
func makeTree(tb testing.TB, dir string, n int) {
	tb.Helper()
	body := bytes.Repeat([]byte("package x // some source text\n"), 8)
	for i := 0; i < n; i++ {
		content := append(fmt.Appendf(nil, "// file %d\n", i), body...)
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/1000), fmt.Sprintf("sub%02d", i/100%10))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%02d.go", i%100)), content, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	writeTree(tb, dir, map[string]string{".gitignore": "build/\n*.o\n", "build/out.o": "obj"})
}

// settled returns the fixture's index after a first scan and a second
// once the racy window has passed, as it stands after a few turns.
func settled(tb testing.TB, f *fixture) []Entry {
	tb.Helper()
	lim := &limits{turnLeft: 1 << 40, budgetLeft: 1 << 40}
	entries, _, _, err := f.h.scan(nil, false, true, lim, nil)
	if err != nil {
		tb.Fatal(err)
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	if entries, _, _, err = f.h.scan(entries, false, true, lim, nil); err != nil {
		tb.Fatal(err)
	}
	return entries
}

// BenchmarkCompareUnchanged is the before/after comparison of a command
// that changed nothing: a stat walk, nothing read.
func BenchmarkCompareUnchanged(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			f := newFixture(b, Options{})
			makeTree(b, f.dir, n)
			prev := settled(b, f)
			lim := &limits{turnLeft: 1 << 40, budgetLeft: 1 << 40}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for b.Loop() {
				entries, _, _, err := f.h.scan(prev, true, false, lim, nil)
				if err != nil {
					b.Fatal(err)
				}
				if c := compare(prev, entries); len(c) != 0 {
					b.Fatalf("%d changes in an unchanged tree", len(c))
				}
			}
			// On a machine shared with other work, the processor time
			// says more than the wall clock.
			b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the processor time this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// changeFiles rewrites k files of the tree with fresh random content of
// size bytes each.
func changeFiles(tb testing.TB, dir string, rng *rand.Rand, k, size int) {
	tb.Helper()
	buf := make([]byte, size)
	for i := 0; i < k; i++ {
		for j := range buf {
			buf[j] = byte('a' + rng.IntN(26))
		}
		p := filepath.Join(dir, "pkg000", fmt.Sprintf("sub%02d", i%10), fmt.Sprintf("file%02d.go", i))
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkRecordChange records the same change (20 files of 100 KB
// rewritten) in two workspace sizes: the content work is the same, only
// the stat walk grows with the tree.
func BenchmarkRecordChange(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			f := newFixture(b, Options{})
			makeTree(b, f.dir, n)
			prev := settled(b, f)
			lim := &limits{turnLeft: 1 << 40, budgetLeft: 1 << 40}
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				changeFiles(b, f.dir, rng, 20, 100<<10)
				b.StartTimer()
				entries, _, _, err := f.h.scan(prev, true, false, lim, nil)
				if err != nil {
					b.Fatal(err)
				}
				if c := compare(prev, entries); len(c) != 20 {
					b.Fatalf("%d changes, want 20", len(c))
				}
				prev = entries
			}
		})
	}
}

// BenchmarkVersusGit puts courier's snapshot of a command's change side
// by side with what a person would do with git: "git add -A && git
// stash" on the same tree after the same change (and "git stash pop"
// outside the timer, so each round starts alike). "first" is the first
// snapshot of the whole tree against "git add -A" into a new repository.
// Run it with: go test -run '^$' -bench VersusGit -benchmem ./internal/snapshot/
func BenchmarkVersusGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed: the comparison needs it")
	}
	const n = 10_000
	b.Run("first/courier", func(b *testing.B) {
		f := newFixture(b, Options{})
		makeTree(b, f.dir, n)
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			os.RemoveAll(f.folder())
			f.open(Options{})
			b.StartTimer()
			if err := f.h.Refresh(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("first/git", func(b *testing.B) {
		dir := b.TempDir()
		makeTree(b, dir, n)
		for b.Loop() {
			b.StopTimer()
			os.RemoveAll(filepath.Join(dir, ".git"))
			runIn(b, dir, "git init -q")
			b.StartTimer()
			runIn(b, dir, "git add -A")
		}
	})
	b.Run("change/courier", func(b *testing.B) {
		f := newFixture(b, Options{})
		makeTree(b, f.dir, n)
		rng := rand.New(rand.NewPCG(1, 2))
		seq := 0
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			seq++
			t := f.turn(seq)
			if err := t.Before(nil); err != nil {
				b.Fatal(err)
			}
			changeFiles(b, f.dir, rng, 20, 100<<10)
			b.StartTimer()
			if _, err := t.After(0, nil); err != nil {
				b.Fatal(err)
			}
			if _, err := t.Finish(); err != nil {
				b.Fatal(err)
			}
			t.Close()
		}
	})
	b.Run("change/git", func(b *testing.B) {
		dir := b.TempDir()
		makeTree(b, dir, n)
		// No automatic gc: it would go on in the background, beyond
		// the timer, and race the removal of the folder.
		git := "git -c gc.auto=0 -c user.name=b -c user.email=b@example.com "
		runIn(b, dir, "git init -q && "+git+"add -A && "+git+"commit -qm base")
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			b.StopTimer()
			changeFiles(b, dir, rng, 20, 100<<10)
			b.StartTimer()
			runIn(b, dir, "git add -A && "+git+"stash -q")
			b.StopTimer()
			runIn(b, dir, git+"stash drop -q")
			b.StartTimer()
		}
	})
}

// BenchmarkFirstSnapshot is the session's first snapshot of a tree of
// small files (Refresh, as a new session makes it): its time, and the
// disk space the store takes afterwards as du counts it, next to the
// bytes of content it protects.
func BenchmarkFirstSnapshot(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			f := newFixture(b, Options{})
			makeTree(b, f.dir, n)
			var du int64
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				os.RemoveAll(f.folder())
				f.open(Options{})
				b.StartTimer()
				if err := f.h.Refresh(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				du = duOf(b, f.folder())
				b.StartTimer()
			}
			b.ReportMetric(float64(du)/(1<<20), "store-MB")
			b.ReportMetric(float64(n*250)/(1<<20), "content-MB")
		})
	}
}

// BenchmarkUndo undoes a turn that rewrote 20 files, with 0 or 200
// older turns in the session: an undo reads only its own turn's records,
// so its cost does not grow with the history behind it.
func BenchmarkUndo(b *testing.B) {
	for _, history := range []int{0, 200} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			f := newFixture(b, Options{})
			makeTree(b, f.dir, 1000)
			seq := 0
			for range history {
				seq++
				f.command(seq, `echo $RANDOM >> pkg000/sub00/file00.go`)
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				seq++
				f.command(seq, `for f in pkg000/sub01/*; do echo changed >> "$f"; done`)
				b.StartTimer()
				if _, err := f.h.Undo(seq); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
