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
	// enter, when set, is called for each folder the walk enters, before it
	// visits its entries, with what it returned for the parent folder (nil
	// for the root) and a reader of small regular files in the folder.
	enter func(dir string, parent *ignoreDir, read func(name string) []byte) *ignoreDir
	// visit is called for every entry with what enter returned for its
	// folder; for a folder, its result says whether to walk into it.
	visit func(e walkEntry, dir *ignoreDir) bool
	// steps, when set, counts the folders the walk opens and reads (see
	// TestWalkStepsLinearInDepth).
	steps *int
}

// heldOpen is how many folders on the walk's way down stay open while it
// is below them; deeper ones are closed and reopened through ".." of
// their subfolder, so that a walk holds few folders open at any depth.
const heldOpen = 32

// walk calls h.visit for every entry below the workspace root, a folder
// before what it holds; an unreadable folder and courier's own (CourierDir)
// are left out. Each folder is
// opened from its parent, never through a symlink: resolving every path
// from the root made a chain of 5,000 nested folders take minutes.
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

// dir visits the entries of the open folder f at path p ("" for the
// root), files first, walks into the subfolders visit wants, and closes f.
// When up is set, f's parent was closed: dir returns it reopened through
// "..", or nil when that is no longer the parent (whose other subfolders
// are then left out).
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

// readSmallAt reads what readIgnore reads of the regular file name in the
// folder dir; nil if there is none.
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

// sniffSize is how much of a file the listing reads to tell binary files,
// which hold a NUL byte near the start, as git tells them.
const sniffSize = 8192

// describeAt is lstatAt that also marks a regular file binary. Nothing
// but a regular file is opened (opening a device may itself do
// something), and it is checked again once open.
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
