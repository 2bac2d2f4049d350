package workspace

import (
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// Entry is one file of a listing, or a folder summary.
type Entry struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"` // none for folder summaries
	Binary  bool   `json:"binary,omitempty"`
	Files   int    `json:"files,omitempty"` // in a folder summary
	IsDir   bool   `json:"isDir,omitempty"`
	Regular bool   `json:"-"` // not a link, a pipe or a device
}

// ListOptions shape a listing.
type ListOptions struct {
	MaxEntries int  // lines before folders are summarised (0: no limit)
	GitIgnore  bool // hide what .gitignore files and .git/info/exclude hide
	// IgnoreCut is told of each ignore file used only in part.
	IgnoreCut func(path string, patterns int)
}

// skippedDirs are tool state and downloaded dependencies: noise to an LLM.
var skippedDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true,
	"__pycache__": true, ".venv": true, "venv": true, ".mypy_cache": true,
	".pytest_cache": true, ".tox": true, ".gradle": true, ".idea": true,
	".next": true, ".cache": true,
}

// List returns the workspace's files sorted by path, or folder summaries
// when there are more than opts.MaxEntries (see summarise). Only the files
// shown are looked up and read.
func (w *Workspace) List(opts ListOptions) ([]Entry, error) {
	var paths []string
	if err := w.walkFiles(opts, func(e walkEntry) { paths = append(paths, e.path) }); err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var shown []Entry
	if opts.MaxEntries > 0 && len(paths) > opts.MaxEntries {
		shown = summarise(paths, opts.MaxEntries)
	} else {
		shown = make([]Entry, len(paths))
		for i, p := range paths {
			shown[i].Path = p
		}
	}
	return w.describe(shown)
}

// describe looks up each file of shown (see describeAt), dropping those
// gone, walking only the folders that lead to them.
func (w *Workspace) describe(shown []Entry) ([]Entry, error) {
	files := map[string]*Entry{}
	dirs := map[string]bool{}
	for i := range shown {
		if e := &shown[i]; !e.IsDir {
			files[e.Path] = e
			for d := parentDir(e.Path); d != "" && !dirs[d]; d = parentDir(d) {
				dirs[d] = true
			}
		}
	}
	found := map[string]bool{}
	buf := make([]byte, sniffSize)
	err := w.walk(walkHooks{visit: func(e walkEntry, _ *ignoreDir) bool {
		if e.isDir {
			return dirs[e.path]
		}
		if f := files[e.path]; f != nil {
			found[e.path] = describeAt(e.dir, e.name, buf, f)
		}
		return false
	}})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(shown, func(e Entry) bool { return !e.IsDir && !found[e.Path] }), nil
}

// Files returns every file a listing covers, sorted, without binary marks.
func (w *Workspace) Files(opts ListOptions) ([]Entry, error) {
	var files []Entry
	err := w.walkFiles(opts, func(e walkEntry) {
		f := Entry{Path: e.path}
		if lstatAt(e.dir, e.name, &f) {
			files = append(files, f)
		}
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// walkFiles calls file with every file a listing covers (see Files).
func (w *Workspace) walkFiles(opts ListOptions, file func(e walkEntry)) error {
	h := walkHooks{visit: func(e walkEntry, dir *ignoreDir) bool {
		if e.isDir && skippedDirs[e.name] || !e.isDir && atomicfile.IsTemp(e.name) || dir.ignored(e.path, e.isDir) {
			return false
		}
		if !e.isDir {
			file(e)
		}
		return e.isDir
	}}
	if opts.GitIgnore {
		h.enter = func(dir string, parent *ignoreDir, read func(string) []byte) *ignoreDir {
			return w.enterIgnore(dir, parent, read, opts.IgnoreCut)
		}
	}
	return w.walk(h)
}

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
