package workspace

import (
	"path"
	"strings"
)

// RestPath is the Path of the folder-like entry that stands for the files
// a listing had no room for, when even its top level does not fit.
const RestPath = "..."

// summarise groups files by folder at the deepest level whose listing still
// fits in max lines, so a huge tree reads as a map rather than a flood.
func summarise(files []Entry, max int) []Entry {
	best := group(files, 1)
	for depth := 2; len(best) <= max; depth++ {
		g := group(files, depth)
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

// group lists files that sit less than depth folders deep individually and
// folds the rest into their folder at that depth.
func group(files []Entry, depth int) []Entry {
	var out []Entry
	index := map[string]int{}
	for _, f := range files {
		parts := strings.Split(f.Path, "/")
		if len(parts) <= depth {
			out = append(out, f)
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
		out[i].Size += f.Size
	}
	return out
}

// fold keeps max-1 entries, folders first since they map more of the tree,
// and counts the rest in one RestPath entry, so the listing keeps its limit
// even for a folder holding thousands of files directly.
func fold(entries []Entry, max int) []Entry {
	keep := make([]bool, len(entries))
	room := max - 1
	for _, dirs := range []bool{true, false} {
		for i, e := range entries {
			if room > 0 && e.IsDir == dirs {
				keep[i] = true
				room--
			}
		}
	}
	out := make([]Entry, 0, max)
	rest := Entry{Path: RestPath, IsDir: true}
	for i, e := range entries {
		switch {
		case keep[i]:
			out = append(out, e)
		case e.IsDir:
			rest.Files += e.Files
			rest.Size += e.Size
		default:
			rest.Files++
			rest.Size += e.Size
		}
	}
	return append(out, rest)
}
