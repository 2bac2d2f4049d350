package workspace

import (
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// Entry is one file of a listing, or a folder summary.
type Entry struct {
	Path string `json:"path"`
	// Size is a file's size; folder summaries have none, since adding up
	// a folder's sizes means looking up every file in it.
	Size   int64 `json:"size"`
	Binary bool  `json:"binary,omitempty"`
	// Files is set on folder summaries: how many files the folder holds.
	Files int  `json:"files,omitempty"`
	IsDir bool `json:"isDir,omitempty"`
	// Regular is set when the walk found a regular file (not a link, a
	// pipe or a device), so that reading it needs no look-up first.
	Regular bool `json:"-"`
}

// ListOptions shape a listing.
type ListOptions struct {
	// MaxEntries is how many lines the listing may have before folders are
	// summarised (0: no limit).
	MaxEntries int
	// GitIgnore hides what the workspace's .gitignore files and
	// .git/info/exclude hide, as git decides it. The ignore files are read
	// as the listing walks, each from its folder.
	GitIgnore bool
	// IgnoreCut, when set, is told of each ignore file the listing uses
	// only part of (see IgnoreCutNote), with the patterns it uses.
	IgnoreCut func(path string, patterns int)
	// Ignore, when set, hides a path (slash form, relative) from the listing;
	// for a folder it hides everything below it.
	Ignore func(p string, isDir bool) bool
}

// walkEntry is one entry a walk of the workspace found.
type walkEntry struct {
	path  string // slash path from the workspace root
	name  string
	isDir bool
	size  int64 // when the walk was asked for sizes
	// regular is set when the folder's entry, or a look-up, said it is a
	// regular file: not a link, a pipe or a device.
	regular bool
}

// walkHooks say what a walk does with what it finds.
type walkHooks struct {
	// withSize has the walk look up the size of every entry but folders.
	withSize bool
	// enter, when set, is called for each folder the walk enters, before it
	// visits its entries, with what it returned for the parent folder (nil
	// for the root) and a reader of small regular files in the folder.
	enter func(dir string, parent *ignoreDir, read func(name string) []byte) *ignoreDir
	// visit is called for every entry with what enter returned for its
	// folder; for a folder, its result says whether to walk into it.
	visit func(e walkEntry, dir *ignoreDir) bool
	// steps, when set, counts what the walk asks of the kernel: each
	// folder opened (one opened by its path counts every folder on the
	// path), each read of a folder, each entry looked up. It must grow
	// with the number of entries, not with their depth (see
	// TestWalkStepsLinearInDepth); Linux walks count them.
	steps *int
}

// skippedDirs are folders that are tool state or downloaded dependencies:
// listing them would drown the LLM's context in noise.
var skippedDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true,
	"__pycache__": true, ".venv": true, "venv": true, ".mypy_cache": true,
	".pytest_cache": true, ".tox": true, ".gradle": true, ".idea": true,
	".next": true, ".cache": true,
}

// List walks the workspace and returns its files sorted by path, or folder
// summaries when there are more than opts.MaxEntries files (and, if even
// the top level does not fit, a last RestPath entry counting the rest).
//
// The walk only reads folders, as find -type f does: only the files the
// listing shows one by one are looked up, for their size, and read, to
// mark binary ones. A shown file gone by then is left out.
func (w *Workspace) List(opts ListOptions) ([]Entry, error) {
	var paths []string
	// Files of another kind than regular ones are few: those are kept
	// apart rather than a mark for every file.
	var irregular map[string]bool
	err := w.walkFiles(opts, false, func(e walkEntry) {
		paths = append(paths, e.path)
		if !e.regular {
			if irregular == nil {
				irregular = map[string]bool{}
			}
			irregular[e.path] = true
		}
	})
	if err != nil {
		return nil, err
	}
	if !walkInPathOrder {
		slices.Sort(paths)
	}
	var shown []Entry
	if opts.MaxEntries > 0 && len(paths) > opts.MaxEntries {
		shown = summarise(paths, opts.MaxEntries)
	} else {
		shown = make([]Entry, len(paths))
		for i, p := range paths {
			shown[i].Path = p
		}
	}
	for i := range shown {
		shown[i].Regular = !shown[i].IsDir && !irregular[shown[i].Path]
	}
	return w.describeAll(shown), nil
}

// Files returns every file a listing covers, sorted by path, with sizes
// but without binary marks: tool folders (see skippedDirs), courier's
// temporary files and what opts hides are left out. MaxEntries is not
// used.
func (w *Workspace) Files(opts ListOptions) ([]Entry, error) {
	var files []Entry
	err := w.walkFiles(opts, true, func(e walkEntry) {
		files = append(files, Entry{Path: e.path, Size: e.size, Regular: e.regular})
	})
	if err != nil {
		return nil, err
	}
	if !walkInPathOrder {
		slices.SortFunc(files, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	}
	return files, nil
}

// walkFiles calls file with every file a listing covers (see Files), with
// its size when withSize is set.
func (w *Workspace) walkFiles(opts ListOptions, withSize bool, file func(e walkEntry)) error {
	h := walkHooks{withSize: withSize}
	if opts.GitIgnore {
		h.enter = func(dir string, parent *ignoreDir, read func(name string) []byte) *ignoreDir {
			return w.enterIgnore(dir, parent, read, opts.IgnoreCut)
		}
	}
	h.visit = func(e walkEntry, dir *ignoreDir) bool {
		if e.isDir && skippedDirs[e.name] || !e.isDir && atomicfile.IsTemp(e.name) {
			return false
		}
		if dir.ignored(e.path, e.name, e.isDir) || opts.Ignore != nil && opts.Ignore(e.path, e.isDir) {
			return false
		}
		if !e.isDir {
			file(e)
		}
		return e.isDir
	}
	return w.walk(h)
}
