package workspace

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
)

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

// heldOpen is how many folders on the way down stay open; deeper ones are
// closed and reopened through ".." of their subfolder.
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

// dir visits the entries of the open folder f at p ("" for the root),
// files first, walks into the subfolders visit wants, and closes f. With
// up set, f's parent was closed: dir returns it reopened through "..", or
// nil when that is no longer the parent (its other subfolders left out).
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

// describeAt is lstatAt that also marks a regular file binary. Only a
// regular file is opened (opening a device may do something), and it is
// checked again once open.
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
