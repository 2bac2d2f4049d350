package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// storeIsWhole fails the test unless every content the index and the
// turns' records refer to reads back whole (a damaged or missing one
// fails its hash check).
func storeIsWhole(t *testing.T, f *fixture, what string) {
	t.Helper()
	ix, err := loadIndex(f.h.indexPath())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range ix.Entries {
		if e.stored() {
			want[e.Hash] = true
		}
	}
	seqs, err := f.store.Turns(f.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range seqs {
		tr, err := f.store.ReadTurn(f.id, seq)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hashes(tr.Records) {
			want[h] = h != ""
		}
	}
	for h, ok := range want {
		if _, err := f.h.obj.read(h); ok && err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// manySmallFiles adds n small files of distinct content under many/.
func manySmallFiles(t *testing.T, f *fixture, n int) {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("many/d%02d/f%04d.txt", i%40, i)] = fmt.Sprintf("small file %d\n%s", i, bytes.Repeat([]byte{byte('a' + i%26)}, i%300))
	}
	f.write(files)
}

// TestCrashWhilePacking kills courier at random moments while the first
// snapshot of thousands of small files is appended to a pack, and while
// a turn is recorded after it; the next run finishes the turn (appending
// to the same pack, after whatever the crash left), undo gives back
// exactly the tree before the turn, and every content the store refers
// to reads back whole, before and after a collection rewrote the packs.
func TestCrashWhilePacking(t *testing.T) {
	const files = 2000
	full := time.Duration(1 << 62)
	for range 2 {
		ref := newFixture(t, Options{})
		crashTree(t, ref)
		manySmallFiles(t, ref, files)
		start := time.Now()
		runChild(t, ref, "pack", filepath.Join(t.TempDir(), "mark"), time.Hour)
		full = min(full, time.Since(start))
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	killed, torn := 0, 0
	for it := 0; it < crashIterations(t); it++ {
		f := newFixture(t, Options{})
		crashTree(t, f)
		manySmallFiles(t, f, files)
		before := listing(t, f.dir)
		mark := filepath.Join(t.TempDir(), "mark")
		delay := time.Duration(rng.Int64N(int64(full)))
		ctx := fmt.Sprintf("iteration %d (kill after %s of %s)", it, delay, full)
		if k, _ := runChild(t, f, "pack", mark, delay); k {
			killed++
		}
		if packsHaveDeadBytes(t, f) {
			torn++
		}
		f.open(Options{})
		if err := recordCrashTurn(f.h, f.dir, mark); err != nil {
			t.Fatalf("%s: recovery: %v", ctx, err)
		}
		storeIsWhole(t, f, ctx)
		rep := f.undo(1)
		sameTree(t, ctx, listing(t, f.dir), before)
		if len(rep.Kept) > 0 || len(rep.NotUndone) > 0 {
			t.Fatalf("%s: undo reported %s", ctx, rep.Notice())
		}
		if _, err := f.h.GC(1); err != nil {
			t.Fatalf("%s: gc: %v", ctx, err)
		}
		if packsHaveDeadBytes(t, f) {
			t.Fatalf("%s: a collection over budget left dead bytes in the packs", ctx)
		}
		storeIsWhole(t, f, ctx+", after gc")
	}
	t.Logf("%d iterations, %d killed, %d of them leaving pack bytes no index lists (a full run takes %s)", crashIterations(t), killed, torn, full)
}

// packsHaveDeadBytes reports whether a pack holds bytes its index does
// not list, or there is a pack without an index.
func packsHaveDeadBytes(t *testing.T, f *fixture) bool {
	t.Helper()
	o := &objects{dir: f.h.obj.dir}
	nums, _, err := numbered(o.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.load(); err != nil {
		t.Fatal(err)
	}
	listed := map[int]int64{}
	for _, at := range o.table {
		listed[at.pack] += at.n
	}
	for _, num := range nums {
		info, err := os.Stat(o.path(num, "pack"))
		if err != nil || info.Size() != listed[num] {
			return true
		}
		if _, err := os.Stat(o.path(num, "idx")); err != nil {
			return true
		}
	}
	return false
}

// TestPackSurvivesTornWrites plays what a crash can leave in the packs:
// half an object at the end of a pack, half a record at the end of its
// index, a pack whose index was never written. The next run appends
// after the debris, everything reads back, undo works, and a collection
// gives the dead space back.
func TestPackSurvivesTornWrites(t *testing.T) {
	f := newFixture(t, Options{})
	manySmallFiles(t, f, 200)
	if err := f.h.Refresh(); err != nil {
		t.Fatal(err)
	}
	appendTo := func(path string, data []byte) {
		t.Helper()
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fh.Write(data); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	f.open(Options{})
	o := f.h.obj
	appendTo(o.path(1, "pack"), []byte("rhalf an object, never indexed"))
	appendTo(o.path(1, "idx"), bytes.Repeat([]byte{7}, 30))
	f.open(Options{})
	before := listing(t, f.dir)
	f.command(1, `for f in many/d0*/*; do echo changed >> "$f"; done && echo new > many/new.txt && rm -r many/d39`)
	if _, err := os.Stat(o.path(2, "pack")); err == nil {
		t.Fatal("the turn began a new pack: the test shows nothing about appending after debris")
	}
	storeIsWhole(t, f, "after the turn")
	if err := os.WriteFile(o.path(5, "pack"), []byte("rno index was written for this pack"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.undo(1)
	sameTree(t, "after undo", listing(t, f.dir), before)
	if !packsHaveDeadBytes(t, f) {
		t.Fatal("the debris is gone before any collection: the test shows nothing")
	}
	duBefore := duOf(t, o.dir)
	if _, err := f.h.GC(1); err != nil {
		t.Fatal(err)
	}
	if packsHaveDeadBytes(t, f) {
		t.Error("the collection left dead bytes in the packs")
	}
	if du := duOf(t, o.dir); du >= duBefore {
		t.Errorf("the packs take %d bytes after the collection, %d before", du, duBefore)
	}
	f.open(Options{})
	storeIsWhole(t, f, "after the collection")
	if !storeHolds(t, f.h, "small file 15\n") {
		t.Error("the collection dropped a content the workspace still has")
	}
}

// TestGCGivesBackPackedSpace: each turn's command replaces 60 small
// files by 60 others, so older contents live on only in older turns'
// snapshots; past the budget those turns are pruned and the packs
// holding their contents rewritten, so the disk space comes back. The
// newest turn is still undone exactly.
func TestGCGivesBackPackedSpace(t *testing.T) {
	const budget = 600 << 10
	f := newFixture(t, Options{Budget: budget})
	f.write(map[string]string{"keep.txt": "keep\n"})
	var before string
	for seq := 1; seq <= 8; seq++ {
		before = listing(t, f.dir)
		// 60 files of 3,500 random hex digits: about 210 KB a turn.
		f.command(seq, fmt.Sprintf(`rm -rf gen && mkdir gen && awk 'BEGIN { srand(); for (i = 0; i < 60; i++) { f = "gen/" i ".txt"; s = "turn %d "; for (j = 0; j < 500; j++) s = s sprintf("%%07x", int(rand() * 268435456)); print s > f; close(f) } }'`, seq))
		rep, err := f.h.GC(budget)
		if err != nil {
			t.Fatal(err)
		}
		if du := duOf(t, f.h.obj.dir); du > budget || rep.Over {
			t.Errorf("turn %d: the store takes %d bytes (said %d) for a budget of %d", seq, du, rep.Size, budget)
		}
	}
	var pruned []int
	for seq := 1; seq <= 8; seq++ {
		if tr, err := f.store.ReadTurn(f.id, seq); err == nil && tr.Has(RecordPruned) {
			pruned = append(pruned, seq)
		}
	}
	if len(pruned) < 4 {
		t.Fatalf("turns %v pruned: want at least 4 of 8", pruned)
	}
	if packsHaveDeadBytes(t, f) {
		t.Error("pruned contents still take space in the packs")
	}
	f.undo(8)
	sameTree(t, "after undo", listing(t, f.dir), before)
	if !storeHolds(t, f.h, "keep\n") {
		t.Error("a content the workspace still has was dropped")
	}
}

// TestPackRemovedByHand: a pack removed from under its index (by hand, or
// by a disk tool) makes gc drop its index rather than fail ever after;
// contents read afterwards are stored as usual.
func TestPackRemovedByHand(t *testing.T) {
	f := newFixture(t, Options{})
	manySmallFiles(t, f, 50)
	if err := f.h.Refresh(); err != nil {
		t.Fatal(err)
	}
	f.open(Options{})
	if err := os.Remove(f.h.obj.path(1, "pack")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.h.GC(DefaultBudget); err != nil {
		t.Fatalf("gc: %v", err)
	}
	if _, err := os.Stat(f.h.obj.path(1, "idx")); err == nil {
		t.Error("the index of the removed pack is still there")
	}
	f.write(map[string]string{"many/d00/f0000.txt": "written again\n"})
	f.command(1, `echo changed > many/d00/f0000.txt`)
	if _, err := f.h.obj.read(Hash("written again\n")); err != nil {
		t.Errorf("a content written after the loss is not stored: %v", err)
	}
}

func TestGCWarning(t *testing.T) {
	for _, tc := range []struct {
		rep  GCReport
		want string
	}{
		{GCReport{}, ""},
		{GCReport{Pruned: []int{3}}, "snapshots of turn 3 dropped to stay within the 1.0 MB snapshot budget: it can no longer be undone"},
		{GCReport{Pruned: []int{1, 2}}, "snapshots of turns 1 and 2 dropped to stay within the 1.0 MB snapshot budget: they can no longer be undone"},
		{GCReport{Pruned: []int{1, 2, 3, 4}}, "snapshots of turns 1-4 dropped to stay within the 1.0 MB snapshot budget: they can no longer be undone"},
		{GCReport{Pruned: []int{1, 3, 4}, Over: true, Size: 2 << 20}, "snapshots of turns 1, 3 and 4 dropped to stay within the 1.0 MB snapshot budget: they can no longer be undone; the snapshot store takes 2.0 MB, over its 1.0 MB budget, for the current workspace and the last turn alone"},
	} {
		if got := tc.rep.Warning(1 << 20); got != tc.want {
			t.Errorf("Warning(%+v) =\n%q, want\n%q", tc.rep, got, tc.want)
		}
	}
}
