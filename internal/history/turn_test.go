package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileCommandsAndRunCommandsInOneTurn plays a turn the way the engine
// will: file commands recorded by their paths alone, commands by a scan,
// and undoes all of it, folders a file command created included.
func TestFileCommandsAndRunCommandsInOneTurn(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{".gitignore": "dist/\n", "main.go": "package main\n", "dist/keep": "k"})
	before := listing(t, f.dir)
	tr := f.turn(1)
	defer tr.Close()
	write := func(key int, p, content string) Changes {
		t.Helper()
		if err := tr.Before([]string{p}); err != nil {
			t.Fatal(err)
		}
		wb := f.ws.NewBatch()
		wb.Write(p, content, 0)
		if err := wb.Commit()[0].Err; err != nil {
			t.Fatal(err)
		}
		ch, err := tr.After(key, []string{p})
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	if ch := write(0, "main.go", "package main // edited\n"); ch.Summary(5) != "changed: main.go (edited)" {
		t.Errorf("CREATE_FILE over main.go: %s", ch.Summary(5))
	}
	if ch := write(1, "new/deep/file.txt", "new\n"); !strings.Contains(ch.Summary(5), "new/ (new, 1 file, 4 bytes)") {
		t.Errorf("CREATE_FILE in new folders: %s", ch.Summary(5))
	}
	// A file command may write where .gitignore leaves paths out: it is
	// snapshotted anyway, as today's undo does.
	if ch := write(2, "dist/keep", "changed"); ch.Summary(5) != "changed: dist/keep (edited)" {
		t.Errorf("CREATE_FILE in an ignored folder: %s", ch.Summary(5))
	}
	if err := tr.Before(nil); err != nil {
		t.Fatal(err)
	}
	f.sh(`echo built > main.bin && rm new/deep/file.txt`)
	ch, err := tr.After(3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Summary(5) != "changed: main.bin (new, 6 bytes), new/deep/file.txt (deleted)" {
		t.Errorf("RUN_COMMAND: %s", ch.Summary(5))
	}
	if err := tr.Before([]string{"main.go"}); err != nil {
		t.Fatal(err)
	}
	wb := f.ws.NewBatch()
	wb.Remove("main.go")
	if err := wb.Commit()[0].Err; err != nil {
		t.Fatal(err)
	}
	if ch, err := tr.After(4, []string{"main.go"}); err != nil || ch.Summary(5) != "changed: main.go (deleted)" {
		t.Errorf("DELETE_FILE: %s, %v", ch.Summary(5), err)
	}
	if _, err := tr.Finish(); err != nil {
		t.Fatal(err)
	}
	var diff bytes.Buffer
	if err := f.h.Diff(&diff, 1, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- main.go\n+++ /dev/null\n", "+++ dist/keep\n@@ -1 +1 @@\n-k\n\\ No newline at end of file\n+changed\n", "+++ main.bin\n@@ -0,0 +1 @@\n+built\n", "# new: new folder\n"} {
		if !strings.Contains(diff.String(), want) {
			t.Errorf("diff lacks %q:\n%s", want, diff.String())
		}
	}
	f.undo(1)
	sameTree(t, "after undo", listing(t, f.dir), before)
}

// TestDiffQuotesOddNames: a file name holding a newline cannot pass for
// lines of the diff.
func TestDiffQuotesOddNames(t *testing.T) {
	f := newFixture(t, Options{})
	f.command(1, `printf 'x\n' > "$(printf 'a\n+++ forged')"`)
	var diff bytes.Buffer
	if err := f.h.Diff(&diff, 1, 0); err != nil {
		t.Fatal(err)
	}
	if want := "--- /dev/null\n+++ \"a\\n+++ forged\"\n@@ -0,0 +1 @@\n+x\n"; diff.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", diff.String(), want)
	}
}

// TestFileCommandThroughSymlinkedFolder: a file command whose path goes
// through a symlinked folder inside the workspace changes the real
// folder; the snapshot scans to see it and undo restores it.
func TestFileCommandThroughSymlinkedFolder(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{"real/a.txt": "a\n"})
	f.sh(`ln -s real link`)
	before := listing(t, f.dir)
	tr := f.turn(1)
	defer tr.Close()
	if err := tr.Before([]string{"link/a.txt"}); err != nil {
		t.Fatal(err)
	}
	wb := f.ws.NewBatch()
	wb.Write("link/a.txt", "through the link\n", 0)
	if err := wb.Commit()[0].Err; err != nil {
		t.Fatal(err)
	}
	ch, err := tr.After(0, []string{"link/a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Summary(5) != "changed: real/a.txt (edited)" {
		t.Errorf("summary: %s", ch.Summary(5))
	}
	if _, err := tr.Finish(); err != nil {
		t.Fatal(err)
	}
	f.undo(1)
	sameTree(t, "after undo", listing(t, f.dir), before)
}

// TestResumeAfterCrash simulates the two crash points of a command:
// before its changes were recorded (the next run finds them) and after
// (the next run does not record them twice).
// With many files, the first scan saves the index instead of recording
// them all; the resumed turn must still see only the command's changes.
func TestResumeAfterCrash(t *testing.T) {
	for _, c := range []struct {
		recorded bool
		extra    int
	}{{false, 0}, {true, 0}, {false, 1500}, {true, 1500}} {
		recorded := c.recorded
		f := newFixture(t, Options{})
		f.write(map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		for i := 0; i < c.extra; i++ {
			f.write(map[string]string{fmt.Sprintf("more/%d", i): "x"})
		}
		before := listing(t, f.dir)
		tr := f.turn(1)
		if err := tr.Before(nil); err != nil {
			t.Fatal(err)
		}
		if err := tr.Append(Record{Kind: RecordStart}); err != nil {
			t.Fatal(err)
		}
		f.sh(`echo changed > a.txt && rm b.txt && echo c > c.txt`)
		if recorded {
			if _, err := tr.After(0, nil); err != nil {
				t.Fatal(err)
			}
		}
		// courier dies here: nothing finished, nothing closed; a new
		// process opens the history.
		f.h = nil
		f.open(Options{})
		tr = f.turn(1)
		ch, err := tr.After(0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := ch.Summary(5); got != "changed: a.txt (edited), b.txt (deleted), c.txt (new, 2 bytes)" {
			t.Errorf("recorded=%v: resumed changes %q", recorded, got)
		}
		if _, err := tr.Finish(); err != nil {
			t.Fatal(err)
		}
		tr.Close()
		if n := countChanged(t, f, 1); n != 1 {
			t.Errorf("recorded=%v: %d command records, want 1", recorded, n)
		}
		f.undo(1)
		sameTree(t, "after undo", listing(t, f.dir), before)
	}
}

// TestUndoWalksBackTurnByTurn undoes several turns newest first; each
// undo touches only its own turn's paths.
func TestUndoWalksBackTurnByTurn(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{"a.txt": "0\n"})
	var states []string
	for seq := 1; seq <= 5; seq++ {
		states = append(states, listing(t, f.dir))
		f.command(seq, `echo `+string(rune('0'+seq))+` > a.txt && mkdir -p d`+string(rune('0'+seq))+` && echo x > d`+string(rune('0'+seq))+`/f`)
	}
	for seq := 5; seq >= 1; seq-- {
		f.undo(seq)
		sameTree(t, "after undo", listing(t, f.dir), states[seq-1])
	}
}

// TestGCPrunesOldestTurns: over the budget, the oldest turns' contents
// are dropped with a warning; the newest stays undoable, a pruned turn
// refuses to be undone, and contents still needed are kept.
func TestGCPrunesOldestTurns(t *testing.T) {
	f := newFixture(t, Options{Budget: 400 << 10})
	f.write(map[string]string{"keep.txt": "keep\n"})
	var rep GCReport
	var warnings []string
	for seq := 1; seq <= 4; seq++ {
		tr := f.turn(seq)
		if err := tr.Before(nil); err != nil {
			t.Fatal(err)
		}
		f.sh(`head -c 150000 /dev/urandom > big.bin`)
		if _, err := tr.After(0, nil); err != nil {
			t.Fatal(err)
		}
		w, err := tr.Finish()
		if err != nil {
			t.Fatal(err)
		}
		tr.Close()
		warnings = append(warnings, w...)
	}
	rep, err := f.h.GC(400 << 10)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Size > 400<<10 {
		t.Fatalf("report %+v", rep)
	}
	if w := strings.Join(warnings, "\n"); !strings.Contains(w, "no longer be undone") {
		t.Errorf("warning: %q", w)
	}
	var pruned int
	for seq := 1; seq <= 4; seq++ {
		if tr, err := f.store.ReadTurn(f.id, seq); err == nil && tr.Has(RecordPruned) && pruned == 0 {
			pruned = seq
		}
	}
	_, err = f.h.Undo(pruned)
	if err == nil || !strings.Contains(err.Error(), "cannot be undone") {
		t.Errorf("undo of a pruned turn: %v", err)
	}
	before4 := filepath.Join(f.dir, "big.bin")
	data, _ := os.ReadFile(before4)
	f.undo(4)
	after, _ := os.ReadFile(before4)
	if bytes.Equal(data, after) || len(after) != 150000 {
		t.Error("the newest turn could not be undone after pruning")
	}
	if keep, _ := os.ReadFile(filepath.Join(f.dir, "keep.txt")); string(keep) != "keep\n" {
		t.Error("keep.txt damaged")
	}
	if !storeHolds(t, f.h, "keep\n") {
		t.Error("GC dropped the content of a file no turn changed")
	}
}

// TestStoreSizeIsDiskUse: the size the budget is held to, and 'courier
// gc' shows, is what the contents take on disk, as du counts it.
func TestStoreSizeIsDiskUse(t *testing.T) {
	f := newFixture(t, Options{})
	files := map[string]string{}
	for i := range 3000 {
		files[fmt.Sprintf("d%02d/f%d.txt", i%30, i)] = fmt.Sprintf("file %d\n", i)
	}
	f.write(files)
	f.sh(`for i in 1 2 3 4 5; do head -c 100000 /dev/urandom > big$i.bin; done`)
	f.command(1, `rm -rf d01 && echo more >> d02/f2.txt && head -c 70000 /dev/urandom > big1.bin`)
	rep, err := f.h.GC(DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	du := duOf(t, f.h.obj.dir)
	if rep.Size < du*9/10 || rep.Size > du*11/10 {
		t.Errorf("the contents are said to take %d bytes; du counts %d", rep.Size, du)
	}
}

// TestSmallFilesTakeTheirSize: 10,000 small files take about their
// content's size in the store, not 10,000 blocks, and come back whole.
func TestSmallFilesTakeTheirSize(t *testing.T) {
	f := newFixture(t, Options{})
	rng := rand.New(rand.NewPCG(3, 4))
	var content int64
	for d := range 100 {
		files := map[string]string{}
		for i := range 100 {
			b := make([]byte, 100+rng.IntN(400))
			for j := range b {
				b[j] = "0123456789abcdef"[rng.IntN(16)]
			}
			files[fmt.Sprintf("d%02d/f%02d.txt", d, i)] = string(b)
			content += int64(len(b))
		}
		f.write(files)
	}
	before := listing(t, f.dir)
	if err := f.h.Refresh(); err != nil {
		t.Fatal(err)
	}
	contents := duOf(t, f.h.obj.dir)
	if contents > content*5/4+64<<10 {
		t.Errorf("%d bytes of content take %d bytes of disk in the store (10,000 blocks would be %d)", content, contents, 10000*4096)
	}
	index, err := os.Stat(f.h.indexPath())
	if err != nil {
		t.Fatal(err)
	}
	if index.Size() > 10000*100 {
		t.Errorf("the index of 10,000 files takes %d bytes", index.Size())
	}
	f.command(1, `rm -rf d0*`)
	f.undo(1)
	sameTree(t, "after undo", listing(t, f.dir), before)
}

// countChanged is how many commands of turn seq have their changes
// recorded.
func countChanged(t *testing.T, f *fixture, seq int) int {
	t.Helper()
	tr, err := f.store.ReadTurn(f.id, seq)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range tr.Records {
		if r.Kind == RecordChanged && r.Index >= 0 {
			n++
		}
	}
	return n
}

// TestIgnoredPathCreatedAndDeleted: a path left out of the history that
// one command creates and the next deletes is, at the end of the turn,
// as it was: the turn finishes, and log and diff show nothing of it.
func TestIgnoredPathCreatedAndDeleted(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{".gitignore": "*.log\n", "main.go": "package main\n"})
	tr := f.turn(1)
	defer tr.Close()
	for i, script := range []string{"echo x > a.log", "rm a.log"} {
		if err := tr.Before(nil); err != nil {
			t.Fatal(err)
		}
		f.sh(script)
		if _, err := tr.After(i, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tr.Finish(); err != nil {
		t.Fatal(err)
	}
	var diff bytes.Buffer
	if err := f.h.Diff(&diff, 1, 0); err != nil || diff.Len() != 0 {
		t.Errorf("diff: %q, %v", diff.String(), err)
	}
}
