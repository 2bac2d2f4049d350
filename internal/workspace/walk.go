package workspace

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// walkEntry is one entry a walk found.
type walkEntry struct {
	path, name string
	isDir      bool
	dir        *os.File // the folder holding a file, open while it is visited
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
	root, err := w.root.Open(".")
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
func (wk *walker) dir(f *os.File, p string, parent *ignoreDir, depth int, up fs.FileInfo) *os.File {
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
		sub, err := openAt(f, e.name, unix.O_DIRECTORY)
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
	pf, err := openAt(f, "..", unix.O_DIRECTORY)
	if err != nil {
		return nil
	}
	if info, err := pf.Stat(); err != nil || !os.SameFile(info, up) {
		pf.Close()
		return nil
	}
	return pf
}

// fileFlags open a file that should be a regular one, to check once open:
// without blocking, in case a named pipe took its place, and without
// making a terminal courier's.
const fileFlags = unix.O_NONBLOCK | unix.O_NOCTTY

// openAt opens name in the folder dir for reading, never through a
// symlink.
func openAt(dir *os.File, name string, flags int) (*os.File, error) {
	for {
		fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// readSmallAt reads what readIgnore reads of the regular file name in the
// folder dir; nil if there is none.
func readSmallAt(dir *os.File, name string) []byte {
	f, err := openAt(dir, name, fileFlags)
	if err != nil {
		return nil
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil
	}
	return readIgnore(f)
}

// lstatAt sets e's size and kind from the entry name of the folder dir,
// never through a symlink; false when there is none.
func lstatAt(dir *os.File, name string, e *Entry) bool {
	var st unix.Stat_t
	if unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	e.Size, e.Regular = st.Size, st.Mode&unix.S_IFMT == unix.S_IFREG
	return true
}

// sniffSize is how much of a file the listing reads to tell binary files,
// which hold a NUL byte near the start, as git tells them.
const sniffSize = 8192

// describeAt is lstatAt that also marks a regular file binary. Nothing
// but a regular file is opened (opening a device may itself do
// something), and it is checked again once open.
func describeAt(dir *os.File, name string, buf []byte, e *Entry) bool {
	if !lstatAt(dir, name, e) {
		return false
	}
	if !e.Regular {
		return true
	}
	f, err := openAt(dir, name, fileFlags)
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
