// Package workspace carries out file operations inside one folder and never
// outside it: every access goes through os.Root, so absolute paths, ".."
// escapes and symlinks that lead out are refused by the kernel-level lookup.
package workspace

import (
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

// Clean checks a path an LLM wrote and returns it in canonical slash form,
// relative to the workspace. Absolute paths and paths that climb out with
// ".." are refused here; symlinks that lead out are refused by os.Root when
// the path is used.
func Clean(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	slashed := strings.ReplaceAll(p, `\`, "/")
	if path.IsAbs(slashed) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" || hasDriveLetter(slashed) {
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

// wrap turns os.Root's escape error into an OutsideError naming the path as
// the LLM wrote it. os.Root does not export its error value, so the text is
// the only way to recognise it.
func wrap(p string, err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "path escapes from parent") {
		return &OutsideError{Path: p}
	}
	return err
}

// Stat describes a file in the workspace, following symlinks that stay
// inside.
func (w *Workspace) Stat(p string) (fs.FileInfo, error) {
	c, err := Clean(p)
	if err != nil {
		return nil, err
	}
	info, err := w.root.Stat(c)
	return info, wrap(p, err)
}

// WriteFile replaces or creates a file as a one-file Batch does, refusing
// a path in a git folder (see CheckWrite), and returns the folders it made.
func (w *Workspace) WriteFile(p string, data []byte) ([]string, error) {
	if err := w.CheckWrite(p); err != nil {
		return nil, err
	}
	b := w.NewBatch()
	b.Write(p, data, 0)
	res := b.Commit()[0]
	return res.CreatedDirs, res.Err
}

// writeTemp writes a temporary file, unsynced: a Batch syncs its
// temporary files together.
func (w *Workspace) writeTemp(p, tmp string, data []byte, perm fs.FileMode) (err error) {
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return wrap(p, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			w.root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	return f.Close()
}

// mkdirAll makes the folders above the clean path c that are missing and
// returns them.
func (w *Workspace) mkdirAll(p, c string) ([]string, error) {
	missing, notDir, err := w.missingDirs(p, c)
	if err != nil {
		return nil, err
	}
	if notDir != "" {
		return nil, fmt.Errorf("'%s' is a file, so it cannot hold '%s'", notDir, p)
	}
	for i, d := range missing {
		if err := w.root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return missing[:i], wrap(p, err)
		}
	}
	return missing, nil
}

// missingDirs lists the folders above the clean path c that do not exist,
// outermost first, and names the nearest one that does when it is not a
// folder.
func (w *Workspace) missingDirs(p, c string) (missing []string, notDir string, err error) {
	for d := path.Dir(c); d != "."; d = path.Dir(d) {
		info, err := w.root.Stat(d)
		if err == nil {
			if !info.IsDir() {
				notDir = d
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", wrap(p, err)
		}
		missing = append([]string{d}, missing...)
	}
	return missing, notDir, nil
}

// Remove deletes a file (never a folder) as a one-file Batch does; a
// symlink is removed itself, not what it points to. A path in a git folder
// is refused (see CheckWrite).
func (w *Workspace) Remove(p string) error {
	c, err := Clean(p)
	if err != nil {
		return err
	}
	if err := w.protect(p, c, false); err != nil {
		return err
	}
	b := w.NewBatch()
	b.Remove(p)
	return b.Commit()[0].Err
}

// remove deletes the file at the clean path c, unsynced.
func (w *Workspace) remove(p, c string) error {
	info, err := w.root.Lstat(c)
	if err != nil {
		return wrap(p, err)
	}
	if info.IsDir() {
		return fmt.Errorf("'%s' is a folder; only files can be deleted", p)
	}
	return wrap(p, w.root.Remove(c))
}

// RemoveEmptyDir removes a folder if it is empty, and is quiet otherwise.
func (w *Workspace) RemoveEmptyDir(p string) error {
	c, err := Clean(p)
	if err != nil {
		return err
	}
	if err := w.protect(p, c, false); err != nil {
		return err
	}
	entries, err := fs.ReadDir(w.root.FS(), c)
	if err != nil || len(entries) > 0 {
		return nil
	}
	return wrap(p, w.root.Remove(c))
}

// FS returns the workspace as a read-only fs.FS.
func (w *Workspace) FS() fs.FS { return w.root.FS() }

// MissingDirs lists the folders that writing p would have to create,
// outermost first.
func (w *Workspace) MissingDirs(p string) ([]string, error) {
	c, err := Clean(p)
	if err != nil {
		return nil, err
	}
	missing, _, err := w.missingDirs(p, c)
	return missing, err
}

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

// tempStem starts the names of the temporary files a write of the file
// named name uses, in its folder: courier's prefix, the name, and a dash.
// A name too long to leave room for the prefix and a unique ending (file
// names hold at most 255 bytes) is cut, and a hash of it added, so that
// the stem still names that file alone.
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
