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
