package history

import (
	"fmt"
	"strings"
	"testing"
)

// TestSummaryCountsWhatCannotBeUndone: when a folder stands for many
// changed files, or the line ends in "and N more", the files undo cannot
// put back are still counted there, so the LLM is never told less than
// the truth.
func TestSummaryCountsWhatCannotBeUndone(t *testing.T) {
	file := func(p string, stored bool, size int64) *Entry {
		e := &Entry{Path: p, Kind: File, Mode: 0o644, Size: size, Hash: fmt.Sprint(size)}
		if stored {
			e.Flags |= Stored
		}
		return e
	}
	var cs Changes
	for i := range 6 {
		p := fmt.Sprintf("data/f%d.bin", i)
		// f0 and f1 were never snapshotted: their edit cannot be undone.
		cs.List = append(cs.List, Change{Path: p, Before: file(p, i > 1, 1), After: file(p, true, 2)})
		if i <= 1 {
			cs.Lost = append(cs.Lost, Skipped{Path: p, Reason: "past the turn's snapshot limit of 1 MB"})
		}
	}
	cs.List = append(cs.List, Change{Path: "z.txt", Before: file("z.txt", true, 1), After: file("z.txt", true, 2)})
	for _, tc := range []struct {
		max  int
		want string
	}{
		{20, "changed: data/f0.bin (edited; not undoable: past the turn's snapshot limit of 1 MB), data/f1.bin (edited; not undoable: past the turn's snapshot limit of 1 MB), data/f2.bin (edited)"},
		{3, "changed: data/ (6 edited, 2 of them not undoable), z.txt (edited)"},
		{1, "changed: 7 paths (2 of them not undoable)"},
	} {
		if got := cs.Summary(tc.max); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Summary(%d):\n%s\nwant\n%s", tc.max, got, tc.want)
		}
	}
}

// TestFoldPaths: a short list is shown whole; a long one folder by
// folder at the deepest level that fits, with what each folder stands
// for; past even that, the rest is counted.
func TestFoldPaths(t *testing.T) {
	folders := []string{"src", "src/sub", "gen", "gen/a", "gen/b"}
	var paths []string
	paths = append(paths, "big.bin", "src", "src/sub", "src/sub/x", "src/a.go", "gen/a", "gen/b")
	for i := range 1500 {
		paths = append(paths, fmt.Sprintf("gen/a/%d", i), fmt.Sprintf("gen/b/%d", i))
	}
	for _, tc := range []struct {
		paths []string
		max   int
		want  []string
	}{
		{paths[:5], 5, []string{"big.bin", "src/", "src/sub/", "src/sub/x", "src/a.go"}},
		{paths, 6, []string{"big.bin", "src/", "src/sub/ (1 file)", "src/a.go", "gen/a/ (1,500 files)", "gen/b/ (1,500 files)"}},
		{paths, 5, []string{"big.bin", "src/ (2 files, 1 folder)", "gen/ (3,000 files, 2 folders)"}},
		{paths, 2, []string{"big.bin", "and 3,006 more"}},
		{[]string{"odd,name", "x/1", "x/2", "x/3"}, 2, []string{`"odd,name"`, "x/ (3 files)"}},
	} {
		got := foldPaths(tc.paths, folders, tc.max)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("foldPaths(%d paths, %d):\n%s\nwant\n%s", len(tc.paths), tc.max, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
