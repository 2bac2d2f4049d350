package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// Entry is one file of a listing.
type Entry struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Binary bool   `json:"binary,omitempty"`
	// Files is set on folder summaries: how many files the folder holds.
	Files int  `json:"files,omitempty"`
	IsDir bool `json:"isDir,omitempty"`
}

// ListOptions shape a listing.
type ListOptions struct {
	// MaxEntries is how many lines the listing may have before folders are
	// summarised (0: no limit).
	MaxEntries int
	// Ignore, when set, hides a path (slash form, relative) from the listing;
	// for a folder it hides everything below it. (*Workspace).GitIgnore
	// makes one that follows the workspace's .gitignore files.
	Ignore func(p string, isDir bool) bool
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
func (w *Workspace) List(opts ListOptions) ([]Entry, error) {
	fsys := w.root.FS()
	var files []Entry
	// One sniff buffer for the whole walk: a buffer per file would be
	// most of a large listing's allocations.
	sniff := make([]byte, sniffSize)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			// An unreadable folder is left out rather than failing the listing.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == "." {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if skippedDirs[name] || (opts.Ignore != nil && opts.Ignore(p, true)) {
				return fs.SkipDir
			}
			return nil
		}
		if atomicfile.IsTemp(name) || (opts.Ignore != nil && opts.Ignore(p, false)) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		e := Entry{Path: p, Size: info.Size()}
		if info.Mode().IsRegular() {
			e.Binary = isBinary(fsys, p, sniff)
		}
		files = append(files, e)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list workspace: %w", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	if opts.MaxEntries > 0 && len(files) > opts.MaxEntries {
		return summarise(files, opts.MaxEntries), nil
	}
	return files, nil
}

// sniffSize is how much of a file isBinary reads, as git does.
const sniffSize = 8192

// isBinary looks for a NUL byte in the first sniffSize bytes, as git does.
func isBinary(fsys fs.FS, p string, buf []byte) bool {
	f, err := fsys.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	n, _ := io.ReadFull(f, buf)
	return bytes.IndexByte(buf[:n], 0) >= 0
}
