package workspace

import (
	"math/rand/v2"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// referenceSummary is the summary written the simple way: group the files
// at every depth in turn and keep the deepest that fits.
func referenceSummary(files []string, max int) []Entry {
	groupAt := func(depth int) []Entry {
		var out []Entry
		index := map[string]int{}
		for _, f := range files {
			parts := strings.Split(f, "/")
			if len(parts) <= depth {
				out = append(out, Entry{Path: f})
				continue
			}
			dir := path.Join(parts[:depth]...) + "/"
			i, ok := index[dir]
			if !ok {
				i = len(out)
				index[dir] = i
				out = append(out, Entry{Path: dir, IsDir: true})
			}
			out[i].Files++
		}
		return out
	}
	best := groupAt(1)
	for depth := 2; len(best) <= max; depth++ {
		g := groupAt(depth)
		if len(g) > max || len(g) == len(best) {
			break
		}
		best = g
	}
	if len(best) > max {
		return fold(best, max)
	}
	return best
}

// The one-pass summary gives exactly what trying every depth gives, on
// random trees of every shape, names that sort around "/" included.
func TestSummariseMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	names := []string{"a", "b", "a-b", "a.b", "ab", "z", "a0"}
	for i := 0; i < 3000; i++ {
		seen := map[string]bool{}
		var files []string
		for n := 1 + rng.IntN(60); n > 0; n-- {
			depth := 1 + rng.IntN(6)
			parts := make([]string, depth)
			for j := range parts {
				parts[j] = names[rng.IntN(len(names))]
			}
			p := strings.Join(parts, "/")
			// A path cannot be both a file and a folder.
			clash := seen[p]
			for j := 1; j < depth; j++ {
				clash = clash || seen[strings.Join(parts[:j], "/")]
			}
			for q := range seen {
				clash = clash || strings.HasPrefix(q, p+"/")
			}
			if clash {
				continue
			}
			seen[p] = true
			files = append(files, p)
		}
		slices.Sort(files)
		max := 2 + rng.IntN(20)
		if len(files) <= max {
			continue
		}
		want := referenceSummary(files, max)
		if got := summarise(files, max); !reflect.DeepEqual(got, want) {
			t.Fatalf("files %v, max %d:\n got %v\nwant %v", files, max, got, want)
		}
	}
}

// A chain of folders thousands deep is summarised in one pass.
func TestSummariseDeepChain(t *testing.T) {
	var files []string
	p := ""
	for range 5000 {
		p += "d/"
		files = append(files, p+"f")
	}
	slices.Sort(files)
	got := summarise(files, 300)
	// Each level adds one line (its file) until a 301st would not fit: the
	// first 299 files, and the folder 300 deep holding the other 4,701.
	var dirs []Entry
	nfiles := 0
	for _, e := range got {
		if e.IsDir {
			dirs = append(dirs, e)
		} else {
			nfiles++
		}
	}
	want := Entry{Path: strings.Repeat("d/", 300), IsDir: true, Files: 4701}
	if len(got) != 300 || nfiles != 299 || len(dirs) != 1 || dirs[0] != want {
		t.Fatalf("%d lines, %d files, folders %+v", len(got), nfiles, dirs)
	}
}
