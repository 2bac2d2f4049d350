package history

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
)

// Every access to the workspace goes through folders opened one element
// at a time with O_NOFOLLOW: no symlink is ever followed, whoever planted
// it and whenever.

// openFileAt opens a file of dirfd for reading: never a symlink, without
// blocking on a FIFO swapped in (the caller checks the kind), and a file
// of mode 000 by lifting its mode for the open only.
func openFileAt(dirfd int, name string) (*os.File, error) {
	fd, err := openAt(dirfd, name, fileFlags)
	if errors.Is(err, fs.ErrPermission) {
		var e Entry
		if lstatAt(dirfd, name, &e) == nil && e.Kind == File && chmodAt(dirfd, name, e.Mode|0o400) == nil {
			fd, err = openAt(dirfd, name, fileFlags)
			chmodAt(dirfd, name, e.Mode)
		}
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// readNames lists the folder open as fd, at most limit names (more
// reports there were more).
func readNames(fd, limit int) (names []string, more bool, err error) {
	f, err := dirFile(fd)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	names, err = f.Readdirnames(limit + 1)
	if len(names) > limit {
		return names[:limit], true, nil
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return names, false, err
}

// dirChain opens folders one element at a time, keeping the last chain
// open so that paths in walk order reopen nothing.
type dirChain struct {
	root  int
	paths []string
	fds   []int
}

// open returns a descriptor of folder dir ("" is the workspace), valid
// until the next call or close.
func (c *dirChain) open(dir string) (int, error) {
	if dir == "" {
		c.trim(0)
		return c.root, nil
	}
	if i := slices.Index(c.paths, dir); i >= 0 {
		c.trim(i + 1)
		return c.fds[i], nil
	}
	parent, err := c.open(parentOf(dir))
	if err != nil {
		return -1, err
	}
	fd, err := openAt(parent, path.Base(dir), dirFlags)
	if notFolder(err) {
		return -1, fmt.Errorf("'%s' is not a folder", display(dir))
	}
	if err != nil {
		return -1, err
	}
	c.paths, c.fds = append(c.paths, dir), append(c.fds, fd)
	return fd, nil
}

// forget drops p and below from the chain once p was removed.
func (c *dirChain) forget(p string) {
	if i := slices.IndexFunc(c.paths, func(q string) bool { return q == p || isBelow(q, p) }); i >= 0 {
		c.trim(i)
	}
}

func (c *dirChain) trim(n int) {
	for _, fd := range c.fds[n:] {
		closeFD(fd)
	}
	c.paths, c.fds = c.paths[:n], c.fds[:n]
}

func (c *dirChain) close() { c.trim(0) }
