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
