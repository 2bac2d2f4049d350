// Package workspace carries out file operations inside one folder and never
// outside it: every access goes through os.Root, so absolute paths, ".."
// escapes and symlinks that lead out are refused by the kernel-level lookup.
package workspace

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// OutsideError reports a path that would leave the workspace.
type OutsideError struct{ Path string }

func (e *OutsideError) Error() string {
	return fmt.Sprintf("Path '%s' is outside workspace", e.Path)
}

// IsOutside reports whether err is (or wraps) an OutsideError.
func IsOutside(err error) bool {
	var oe *OutsideError
	return errors.As(err, &oe)
}

// Workspace is an open workspace folder.
type Workspace struct {
	dir  string
	root *os.Root
}

// Open opens dir, which must exist, as a workspace.
func Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &Workspace{dir: abs, root: r}, nil
}

// Close releases the workspace folder.
func (w *Workspace) Close() error { return w.root.Close() }

// Dir returns the absolute path of the workspace folder.
func (w *Workspace) Dir() string { return w.dir }

// Clean checks a path an LLM wrote and returns it in clean slash form,
// relative to the workspace; os.Root refuses links that lead out on use.
func Clean(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	slashed := strings.ReplaceAll(p, `\`, "/")
	if path.IsAbs(slashed) || hasDriveLetter(slashed) {
		return "", &OutsideError{Path: p}
	}
	c := path.Clean(slashed)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", &OutsideError{Path: p}
	}
	return c, nil
}

// hasDriveLetter catches "C:/x" written on a Unix machine.
func hasDriveLetter(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
}

// wrap turns os.Root's escape error, known only by its text, into an
// OutsideError naming the path as the LLM wrote it.
func wrap(p string, err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "path escapes from parent") {
		return &OutsideError{Path: p}
	}
	return err
}

// Stat describes a file in the workspace, following links that stay inside.
func (w *Workspace) Stat(p string) (fs.FileInfo, error) {
	c, err := Clean(p)
	if err != nil {
		return nil, err
	}
	if err := w.private(p, c, true); err != nil {
		return nil, err
	}
	info, err := w.root.Stat(c)
	return info, wrap(p, err)
}

// FS returns the workspace as a read-only fs.FS.
func (w *Workspace) FS() fs.FS { return w.root.FS() }

// CleanTemps removes what an interrupted WriteFile of p left behind.
func (w *Workspace) CleanTemps(p string) error {
	c, err := Clean(p)
	if err != nil {
		return err
	}
	dir := path.Dir(c)
	entries, err := fs.ReadDir(w.root.FS(), dir)
	if err != nil {
		return nil
	}
	prefix := tempStem(path.Base(c))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			if err := w.root.Remove(path.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return wrap(p, err)
			}
		}
	}
	return nil
}

// tempStem starts the names of the temporary files a write of name uses.
// A name too long for the prefix and a unique ending within 255 bytes is
// cut, with a hash of it added so the stem still names that file alone.
func tempStem(name string) string {
	const room = 255 - len(atomicfile.TempPrefix) - 1 - 40 // 40: the unique ending
	if len(name) > room {
		sum := sha256.Sum256([]byte(name))
		cut := room - 17
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "~" + hex.EncodeToString(sum[:8])
	}
	return atomicfile.TempPrefix + name + "-"
}

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
