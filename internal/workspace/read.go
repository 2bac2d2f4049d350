package workspace

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"os"
)

// NotRegularError reports a path that is not a regular file: a named pipe
// could block courier forever, a device never end.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("'%s' is %s, not a regular file", e.Path, cmp.Or(kinds[e.Mode.Type()], "a special file"))
}

// kinds name the file types by fs.FileMode.Type.
var kinds = map[fs.FileMode]string{
	fs.ModeDir: "a folder", fs.ModeNamedPipe: "a named pipe (FIFO)", fs.ModeSocket: "a socket",
	fs.ModeDevice | fs.ModeCharDevice: "a character device", fs.ModeDevice: "a device", fs.ModeSymlink: "a symlink",
}

// OpenRegular opens a regular file of the workspace for reading, following
// links that stay inside. Anything else is refused before it is opened
// (opening a device may do something); the open does not block and is
// checked again, against a named pipe swapped in between.
func (w *Workspace) OpenRegular(p string) (*os.File, fs.FileInfo, error) {
	c, err := Clean(p)
	if err != nil {
		return nil, nil, err
	}
	if err := w.private(p, c, true); err != nil {
		return nil, nil, err
	}
	info, err := w.root.Stat(c)
	if err != nil {
		return nil, nil, wrap(p, err)
	}
	if info.IsDir() {
		return nil, nil, fmt.Errorf("'%s' is a folder, not a file", p)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Path: p, Mode: info.Mode()}
	}
	f, err := w.root.OpenFile(c, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, wrap(p, err)
	}
	now, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !now.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: p, Mode: now.Mode()}
	}
	return f, now, nil
}

// ReadFile returns the content of a regular file (see OpenRegular).
func (w *Workspace) ReadFile(p string) ([]byte, error) {
	f, info, err := w.OpenRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+1))
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
