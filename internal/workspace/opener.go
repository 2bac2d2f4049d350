package workspace

import (
	"io"
	"slices"
)

// Opener reads many files of the workspace whole, each as OpenRegular
// opens it, for a caller that reads thousands of them (the first request's
// pack). OpenRegular resolves a path from the workspace's root, one system
// call for each folder on it, twice (to look the file up, then to open
// it), and makes an *os.File of it; on Linux, Opener holds the folders
// open, each opened from its parent, and reads a file with the calls on
// the file alone. Not safe for concurrent use.
type Opener struct {
	w *Workspace
	// dirs are the folders held open (see opener_linux.go).
	dirs dirCache
}

// NewOpener returns an Opener that holds at most maxDirs folders open.
func (w *Workspace) NewOpener(maxDirs int) *Opener {
	return &Opener{w: w, dirs: newDirCache(w, max(maxDirs, 1))}
}

// Close closes the folders the Opener holds open.
func (o *Opener) Close() { o.dirs.close() }

// ReadRegular reads the regular file p whole into buf, grown as needed,
// and returns the content (buf's, or the grown buffer's). Whatever the
// held folders cannot read plainly (a symlink, anything missing, not a
// regular file, or an error) is read through OpenRegular, so the answer,
// errors included, is always OpenRegular's.
func (o *Opener) ReadRegular(p string, buf []byte) ([]byte, error) {
	return o.read(p, buf, false)
}

// ReadListed is ReadRegular for a file that a listing has just found to
// be a regular file (Entry.Regular): held folders open it at once, and
// check what they opened, rather than look it up first. A device, the
// one kind of file whose opening may itself do something, cannot take
// its place without privileges that would make a look-up moot.
func (o *Opener) ReadListed(p string, buf []byte) ([]byte, error) {
	return o.read(p, buf, true)
}

func (o *Opener) read(p string, buf []byte, listed bool) ([]byte, error) {
	if data, ok := o.dirs.read(p, buf, listed); ok {
		return data, nil
	}
	f, info, err := o.w.OpenRegular(p)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	return readAllInto(f, info.Size(), buf)
}

// readAllInto reads r, a file of size bytes when it was opened, into buf,
// which it first grows to hold size bytes and one more. Once size bytes
// are read it stops, without the read that would find the end: a file
// that grows while it is read may be read only as large as it was when
// opened (an empty one is read to its end, in case it only says it is
// empty). Files come smallest first in a pack: buf grows by half at
// least, not file by file.
func readAllInto(r io.Reader, size int64, buf []byte) ([]byte, error) {
	if need := int(size) + 1; cap(buf) < need {
		buf = make([]byte, max(need, cap(buf)*3/2))
	}
	buf = buf[:cap(buf)]
	n := 0
	for {
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return buf[:n], nil
		}
		if err != nil {
			return buf[:n], err
		}
		if size > 0 && int64(n) == size {
			return buf[:n], nil
		}
		if n == len(buf) {
			// It grew since it was looked up.
			buf = slices.Grow(buf, len(buf))
			buf = buf[:cap(buf)]
		}
	}
}
