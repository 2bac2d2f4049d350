package workspace

import "strings"

// RestPath is the Path of the entry counting the files a listing had no
// room for, when even its top level does not fit.
const RestPath = "..."

// summarise groups sorted files by folder at the deepest level whose
// listing fits in max lines. Every depth is counted in one pass: trying
// depth after depth cost a tree 5,000 folders deep the square of that.
func summarise(files []string, max int) []Entry {
	counts := groupCounts(files)
	count := func(depth int) int {
		if depth >= len(counts) {
			return len(files)
		}
		return counts[depth]
	}
	best := 1
	for depth := 2; count(best) <= max; depth++ {
		n := count(depth)
		if n > max || n == count(best) {
			break
		}
		best = depth
	}
	g := group(files, best)
	if len(g) > max {
		return fold(g, max)
	}
	return g
}

// groupCounts returns, for every depth d up to the deepest file, how many
// lines group(files, d) has. Files being sorted, a file starts a new folder
// at depth d exactly when it shares fewer than d folders with the last.
func groupCounts(files []string) []int {
	var diff []int // diff[d]: how the count changes from depth d-1 to d
	prev := ""
	for _, f := range files {
		n := strings.Count(f, "/") + 1 // the path's elements
		for len(diff) <= n {
			diff = append(diff, 0)
		}
		diff[n]++ // a line of its own from depth n on
		if shared := sharedDirs(prev, f); shared+1 < n {
			diff[shared+1]++ // the first file of a folder line at depths shared+1 .. n-1
			diff[n]--
		}
		prev = f
	}
	counts := make([]int, len(diff))
	run := 0
	for d := range diff {
		run += diff[d]
		counts[d] = run
	}
	return counts
}

// sharedDirs counts the leading folders two paths have in common.
func sharedDirs(a, b string) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return strings.Count(a[:i], "/")
}

// group lists files less than depth folders deep and folds the rest into
// their folder at that depth.
func group(files []string, depth int) []Entry {
	var out []Entry
	for _, f := range files {
		end := dirPrefix(f, depth)
		if end < 0 {
			out = append(out, Entry{Path: f})
			continue
		}
		dir := f[:end]
		if n := len(out); n == 0 || !out[n-1].IsDir || out[n-1].Path != dir {
			out = append(out, Entry{Path: dir, IsDir: true})
		}
		out[len(out)-1].Files++
	}
	return out
}

// dirPrefix returns the length of p's first depth folders with a slash,
// or -1 when p is not deeper.
func dirPrefix(p string, depth int) int {
	i := 0
	for range depth {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			return -1
		}
		i += j + 1
	}
	return i
}

// fold keeps max-1 entries, folders first, and counts the rest in one
// RestPath entry, for a folder holding thousands of files directly.
func fold(entries []Entry, max int) []Entry {
	dirs := 0
	for _, e := range entries {
		if e.IsDir {
			dirs++
		}
	}
	dirRoom, fileRoom := max-1, max-1-min(dirs, max-1)
	out := make([]Entry, 0, max)
	rest := Entry{Path: RestPath, IsDir: true}
	for _, e := range entries {
		switch {
		case e.IsDir && dirRoom > 0:
			out, dirRoom = append(out, e), dirRoom-1
		case !e.IsDir && fileRoom > 0:
			out, fileRoom = append(out, e), fileRoom-1
		case e.IsDir:
			rest.Files += e.Files
		default:
			rest.Files++
		}
	}
	return append(out, rest)
}
