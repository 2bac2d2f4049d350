package workspace

import (
	"container/list"
	"io/fs"
	"os"
	"strings"
)

// Opener opens many files of the workspace, each as OpenRegular does, for
// a caller that reads thousands of them (the first request's pack).
// OpenRegular resolves a path from the workspace's root, one system call
// for each folder on it, twice (to look the file up, then to open it);
// Opener holds the folders open, each opened from its parent, so a file
// costs the calls on the file alone. Not safe for concurrent use.
type Opener struct {
	w *Workspace
	// dirs are the folders held open, by slash path; lru has them from
	// the one used last to the one unused the longest, closed first.
	dirs map[string]*list.Element
	lru  list.List
	max  int
}

// openDir is a folder held open.
type openDir struct {
	path string
	root *os.Root
}

// NewOpener returns an Opener that holds at most maxDirs folders open.
func (w *Workspace) NewOpener(maxDirs int) *Opener {
	return &Opener{w: w, dirs: map[string]*list.Element{}, max: max(maxDirs, 1)}
}

// Close closes the folders the Opener holds open; the files it opened are
// the caller's to close.
func (o *Opener) Close() {
	for e := o.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*openDir).root.Close()
	}
	o.lru.Init()
	clear(o.dirs)
}

// OpenRegular opens the file p as Workspace.OpenRegular does. Whatever the
// held folders cannot open plainly (a symlink leading into another folder,
// anything missing, not a regular file, or an error) is opened by
// Workspace.OpenRegular, so the answer, errors included, is always its.
func (o *Opener) OpenRegular(p string) (*os.File, fs.FileInfo, error) {
	if f, info, ok := o.open(p); ok {
		return f, info, nil
	}
	return o.w.OpenRegular(p)
}

func (o *Opener) open(p string) (*os.File, fs.FileInfo, bool) {
	c, err := Clean(p)
	if err != nil || c == "." {
		return nil, nil, false
	}
	dir, name := "", c
	if i := strings.LastIndexByte(c, '/'); i >= 0 {
		dir, name = c[:i], c[i+1:]
	}
	r := o.dir(dir)
	if r == nil {
		return nil, nil, false
	}
	// Looked up before it is opened, as OpenRegular does: opening a
	// device may itself do something.
	if info, err := r.Stat(name); err != nil || !info.Mode().IsRegular() {
		return nil, nil, false
	}
	f, err := r.OpenFile(name, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, false
	}
	now, err := f.Stat()
	if err != nil || !now.Mode().IsRegular() {
		f.Close()
		return nil, nil, false
	}
	return f, now, true
}

// dir returns the folder dir ("" for the workspace itself) held open,
// opening it from its parent if it is not; nil if it cannot be opened so.
func (o *Opener) dir(dir string) *os.Root {
	if dir == "" {
		return o.w.root
	}
	if e, ok := o.dirs[dir]; ok {
		o.lru.MoveToFront(e)
		return e.Value.(*openDir).root
	}
	parent, name := "", dir
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		parent, name = dir[:i], dir[i+1:]
	}
	pr := o.dir(parent)
	if pr == nil {
		return nil
	}
	// A folder opened from its parent's root cannot lead out of it: a
	// symlink to a folder elsewhere fails here, and the file is opened
	// from the workspace's root instead.
	r, err := pr.OpenRoot(name)
	if err != nil {
		return nil
	}
	if o.lru.Len() >= o.max {
		oldest := o.lru.Back()
		d := oldest.Value.(*openDir)
		d.root.Close()
		delete(o.dirs, d.path)
		o.lru.Remove(oldest)
	}
	o.dirs[dir] = o.lru.PushFront(&openDir{path: dir, root: r})
	return r
}
