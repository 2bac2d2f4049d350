package history

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// randomTree fills dir with folders, files and symlinks, enough for the
// scan to spread over several walkers.
func randomTree(t *testing.T, dir string, rng *rand.Rand) {
	t.Helper()
	dirs := []string{""}
	for i := 0; i < 400; i++ {
		parent := dirs[rng.IntN(len(dirs))]
		name := filepath.Join(parent, fmt.Sprintf("n%d%s", i, []string{"", ".go", "-x", " sp"}[rng.IntN(4)]))
		p := filepath.Join(dir, name)
		switch rng.IntN(6) {
		case 0, 1:
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, name)
		case 2:
			if err := os.Symlink(fmt.Sprintf("target-%d", rng.IntN(5)), p); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(p, []byte(strings.Repeat("x", rng.IntN(3000))), fs.FileMode(0o600+rng.IntN(2)*0o100)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// reference lists a tree with the standard library, in the scan's order.
func reference(t *testing.T, dir string) []Entry {
	t.Helper()
	var out []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			rel = ""
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := Entry{Path: filepath.ToSlash(rel), Mode: uint32(info.Mode().Perm())}
		switch {
		case info.IsDir():
			e.Kind = Dir
		case info.Mode()&fs.ModeSymlink != 0:
			e.Kind = Symlink
			e.Target, _ = os.Readlink(p)
			e.Size = info.Size()
		default:
			e.Kind = File
			e.Size = info.Size()
			data, _ := os.ReadFile(p)
			e.Hash = Hash(string(data))
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return cmpPath(out[i].Path, out[j].Path) < 0 })
	return out
}

func describe(es []Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%q %v %o %d %q", e.Path, e.Kind, e.Mode, e.Size, e.Target)
		if e.Kind == File {
			fmt.Fprintf(&b, " %.12s", e.Hash)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestScanMatchesAWalk checks the parallel scan against a plain walk of
// random trees: same paths in the same order, kinds, modes, sizes,
// contents and targets; then that a second scan reads nothing.
func TestScanMatchesAWalk(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			f := newFixture(t, Options{})
			randomTree(t, f.dir, rand.New(rand.NewPCG(seed, seed)))
			lim := &limits{turnLeft: 1 << 30, budgetLeft: 1 << 30}
			entries, _, _, err := f.h.scan(nil, false, true, lim, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := describe(entries), describe(reference(t, f.dir)); got != want {
				t.Fatalf("scan:\n%s\nwalk:\n%s", got, want)
			}
			for _, e := range entries {
				if e.Kind == File && !e.stored() {
					t.Errorf("%s was not stored", e.Path)
				}
			}
			again, _, _, err := f.h.scan(entries, true, false, lim, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c := compare(entries, again); len(c) != 0 {
				t.Errorf("a second scan of an unchanged tree found %d changes", len(c))
			}
		})
	}
}

// TestRacyEntriesAreReadAgain checks git's racy-clean rule: a file whose
// timestamps are as recent as the scan is read again by the next scan
// even if its stat data did not change, while an older one is not.
func TestRacyEntriesAreReadAgain(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{"old.txt": "old"})
	// Timestamps cannot be set back (ctime): wait until they are old.
	time.Sleep(racyWindow + 100*time.Millisecond)
	f.write(map[string]string{"new.txt": "new"})
	lim := &limits{turnLeft: 1 << 30, budgetLeft: 1 << 30}
	entries, _, _, err := f.h.scan(nil, false, true, lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix := &index{Entries: entries}
	get := func(p string) *Entry {
		return &ix.Entries[slices.IndexFunc(ix.Entries, func(e Entry) bool { return e.Path == p })]
	}
	if get("old.txt").Flags&racy != 0 || get("new.txt").Flags&racy == 0 {
		t.Fatalf("racy flags: old %x, new %x", get("old.txt").Flags, get("new.txt").Flags)
	}
	// Pretend both contents changed without their stat data changing, as
	// a write in the same clock tick as the scan would look: only the
	// racy one is read again, and found changed.
	for _, p := range []string{"old.txt", "new.txt"} {
		get(p).Hash = Hash("something else")
	}
	again, _, _, err := f.h.scan(ix.Entries, true, false, lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	changes := compare(ix.Entries, again)
	if len(changes) != 1 || changes[0].Path != "new.txt" {
		t.Errorf("changes %v, want new.txt only", changes)
	}
}
