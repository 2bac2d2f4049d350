package workspace

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// List returns the workspace's files sorted, or folder summaries past
// opts.MaxEntries; only the files shown are looked up and read.
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

// describe looks up the files of shown (see describeAt), dropping gone ones.
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

// groupCounts returns how many lines group(files, d) has for every depth d:
// a sorted file starts a folder at d when it shares fewer with the last.
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

// group lists files less than depth deep, the rest folded into folders.
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

// dirPrefix returns the length of p's first depth folders, -1 if shallower.
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

// walkEntry is one entry a walk found.
type walkEntry struct {
	path, name string
	isDir      bool
	dir        folder // the folder holding a file, open while it is visited
}

// walkHooks say what a walk does with what it finds.
type walkHooks struct {
	// enter, when set, is called as the walk enters each folder, with what
	// it returned for the parent (nil for the root) and a reader of the
	// folder's small regular files.
	enter func(dir string, parent *ignoreDir, read func(name string) []byte) *ignoreDir
	// visit is called for every entry with what enter returned for its
	// folder; for a folder, true walks into it.
	visit func(e walkEntry, dir *ignoreDir) bool
	steps *int // counts folders opened and read, for tests
}

// heldOpen folders stay open on the way down; deeper ones reopen by "..".
const heldOpen = 32

// walk calls h.visit for every entry below the root, a folder before what
// it holds, leaving out unreadable folders and CourierDir. Each folder is
// opened from its parent, never through a link: resolving every path from
// the root made a chain of 5,000 nested folders take minutes.
func (w *Workspace) walk(h walkHooks) error {
	root, err := openTop(w.root)
	if err != nil {
		return fmt.Errorf("list workspace: %w", err)
	}
	wk := &walker{h: h}
	wk.dir(root, "", nil, 0, nil)
	if wk.err != nil {
		return fmt.Errorf("list workspace: %w", wk.err)
	}
	return nil
}

type walker struct {
	h   walkHooks
	err error // the root could not be read
}

func (wk *walker) step() {
	if wk.h.steps != nil {
		*wk.h.steps++
	}
}

// dir visits folder f at p, files first, then the subfolders visit wants,
// and closes f. With up set, f's parent was closed: dir returns it reopened
// through "..", or nil if that is no longer it.
func (wk *walker) dir(f folder, p string, parent *ignoreDir, depth int, up fs.FileInfo) folder {
	wk.step()
	ents, err := f.ReadDir(-1)
	if err != nil {
		ents = nil // what was read of an unreadable folder is not trusted
		if depth == 0 {
			wk.err = err
		}
	}
	ign := parent
	if wk.h.enter != nil {
		ign = wk.h.enter(p, parent, func(name string) []byte {
			// Most folders have no .gitignore: no failed open for each.
			if !slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == name }) {
				return nil
			}
			return readSmallAt(f, name)
		})
	}
	prefix := p
	if p != "" {
		prefix += "/"
	}
	var dirs []walkEntry
	for _, e := range ents {
		if foldName(e.Name()) == CourierDir {
			continue
		}
		we := walkEntry{path: prefix + e.Name(), name: e.Name(), isDir: e.IsDir(), dir: f}
		if we.isDir {
			dirs = append(dirs, we)
		} else {
			wk.h.visit(we, ign)
		}
	}
	for _, e := range dirs {
		if !wk.h.visit(e, ign) || f == nil {
			continue
		}
		wk.step()
		sub, err := openDirAt(f, e.name)
		if err != nil {
			continue
		}
		if depth < heldOpen {
			wk.dir(sub, e.path, ign, depth+1, nil)
			continue
		}
		info, err := f.Stat()
		f.Close()
		f = nil
		if err == nil {
			f = wk.dir(sub, e.path, ign, depth+1, info)
		} else {
			sub.Close()
		}
	}
	if f == nil {
		return nil
	}
	defer f.Close()
	if up == nil {
		return nil
	}
	wk.step()
	pf, err := openDirAt(f, "..")
	if err != nil {
		return nil
	}
	if info, err := pf.Stat(); err != nil || !os.SameFile(info, up) {
		pf.Close()
		return nil
	}
	return pf
}

// readSmallAt reads what readIgnore reads of the regular file name in dir.
func readSmallAt(dir folder, name string) []byte {
	f, err := openFileAt(dir, name)
	if err != nil {
		return nil
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil
	}
	return readIgnore(f)
}

// sniffSize is how much of a file git reads to tell it binary (a NUL).
const sniffSize = 8192

// describeAt is lstatAt that marks a regular file binary, opening only a
// regular file (a device may act on open), checked again once open.
func describeAt(dir folder, name string, buf []byte, e *Entry) bool {
	if !lstatAt(dir, name, e) {
		return false
	}
	if !e.Regular {
		return true
	}
	f, err := openFileAt(dir, name)
	if err != nil {
		return true
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		e.Regular = false
		return true
	}
	n, _ := io.ReadFull(f, buf[:sniffSize])
	e.Binary = bytes.IndexByte(buf[:n], 0) >= 0
	return true
}
