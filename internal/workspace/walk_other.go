//go:build !unix

package workspace

import (
	"io/fs"
	"os"
	"path"
)

// folder is a path below the root, looked up through os.Root: a link
// swapped in mid-walk may be followed, within the workspace only.
type folder = *rootDir

type rootDir struct {
	r *os.Root
	p string
}

func (d *rootDir) ReadDir(int) ([]fs.DirEntry, error) { return fs.ReadDir(d.r.FS(), d.p) }
func (d *rootDir) Stat() (fs.FileInfo, error)         { return d.r.Lstat(d.p) }
func (d *rootDir) Close() error                       { return nil }

// nonBlock: opening a file never blocks here.
const nonBlock = 0

func openTop(r *os.Root) (folder, error) { return &rootDir{r, "."}, nil }

// openDirAt is the folder name ("..": the parent) of dir, if it is one.
func openDirAt(dir folder, name string) (folder, error) {
	p := path.Join(dir.p, name)
	info, err := dir.r.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid}
	}
	return &rootDir{dir.r, p}, nil
}

func openFileAt(dir folder, name string) (*os.File, error) {
	return dir.r.Open(path.Join(dir.p, name))
}

func lstatAt(dir folder, name string, e *Entry) bool {
	info, err := dir.r.Lstat(path.Join(dir.p, name))
	if err != nil {
		return false
	}
	e.Size, e.Regular = info.Size(), info.Mode().IsRegular()
	return true
}

// FileID: the system gives no inode numbers through fs.FileInfo here.
func FileID(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
