//go:build !linux

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// walkInPathOrder says walk visits entries in the order of their paths:
// fs.WalkDir visits "a/x" before "a-b", which sorts first.
const walkInPathOrder = false

// walk calls h.visit for every entry below the workspace root; visit's
// result for a folder says whether to walk into it. A folder that cannot be
// read is left out. (On Linux, a walk that opens each folder from its
// parent replaces this one, whose cost per folder grows with its depth.)
func (w *Workspace) walk(h walkHooks) error {
	fsys := w.root.FS()
	dirs := map[string]*ignoreDir{}
	read := func(dir string) func(name string) []byte {
		return func(name string) []byte {
			p := path.Join(dir, name)
			info, err := w.root.Lstat(p)
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			f, err := w.root.Open(p)
			if err != nil {
				return nil
			}
			defer f.Close()
			return readIgnore(f)
		}
	}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == "." {
			if h.enter != nil {
				dirs[""] = h.enter("", nil, read("."))
			}
			return nil
		}
		parent := path.Dir(p)
		if parent == "." {
			parent = ""
		}
		e := walkEntry{path: p, name: d.Name(), isDir: d.IsDir(), regular: d.Type().IsRegular()}
		if h.withSize && !e.isDir {
			info, err := d.Info()
			if err != nil {
				return nil
			}
			e.size = info.Size()
		}
		if !h.visit(e, dirs[parent]) {
			if e.isDir {
				return fs.SkipDir
			}
			return nil
		}
		if e.isDir && h.enter != nil {
			dirs[p] = h.enter(p, dirs[parent], read(p))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list workspace: %w", err)
	}
	return nil
}
