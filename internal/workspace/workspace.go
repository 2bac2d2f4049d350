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
	"slices"
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

// wrap turns os.Root's escape error, known by its text, into OutsideError.
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

// tempStem starts the names of the temporary files a write of name uses;
// a name too long for 255 bytes is cut and a hash of it added.
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

// OpenRegular opens a regular file of the workspace, through links inside;
// anything else is refused before opening (a device may act on open), and
// the open, not blocking, is checked again against a pipe swapped in.
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

// CourierDir is courier's own folder: file commands and walks keep out.
const CourierDir = ".courier"

// ProtectedError reports a write into a .git, which says what git runs, or
// (Dir CourierDir) any access to courier's own folder.
type ProtectedError struct{ Path, Dir string }

func (e *ProtectedError) Error() string {
	if e.Dir == CourierDir {
		return fmt.Sprintf("Path '%s' is in %s, courier's own folder, which file commands never read or write", e.Path, CourierDir)
	}
	return fmt.Sprintf("Path '%s' is in .git, which is protected: use git commands, which ask the person", e.Path)
}

// IsProtected reports whether err is (or wraps) a ProtectedError.
func IsProtected(err error) bool {
	var pe *ProtectedError
	return errors.As(err, &pe)
}

// maxLinks bounds the links followed resolving one path, as the kernel's.
const maxLinks = 40

// CheckWrite refuses a write, removal or mode change in a .git (by any name
// for it, at any depth, through links) or other git folder (see inGitDir).
func (w *Workspace) CheckWrite(p string) error {
	c, err := Clean(p)
	if err != nil {
		return err
	}
	return w.protect(p, c, true)
}

// protect refuses a write of c (written p); followLast judges a last link.
func (w *Workspace) protect(p, c string, followLast bool) error {
	if err := w.private(p, c, followLast); err != nil {
		return err
	}
	if hasDotGit(c) {
		return &ProtectedError{Path: p}
	}
	real, ok := w.resolve(c, followLast)
	if !ok {
		// A loop or a link leading out: os.Root refuses the write itself.
		return nil
	}
	if hasDotGit(real) || w.inGitDir(real) {
		return &ProtectedError{Path: p}
	}
	return nil
}

// private refuses any access to c in courier's own folder, through links too.
func (w *Workspace) private(p, c string, followLast bool) error {
	in := func(c string) bool {
		return slices.ContainsFunc(strings.Split(c, "/"), func(name string) bool { return foldName(name) == CourierDir })
	}
	if real, ok := w.resolve(c, followLast); in(c) || ok && in(real) {
		return &ProtectedError{Path: p, Dir: CourierDir}
	}
	return nil
}

// inGitDir reports whether c, with no link left, lies below a folder other
// than the workspace holding a HEAD: a git folder whatever its name.
func (w *Workspace) inGitDir(c string) bool {
	for d := path.Dir(c); d != "."; d = path.Dir(d) {
		if _, err := w.root.Lstat(d + "/HEAD"); err == nil {
			return true
		}
	}
	return false
}

// hasDotGit reports whether a clean slash path has a .git element.
func hasDotGit(c string) bool { return slices.ContainsFunc(strings.Split(c, "/"), isDotGit) }

// isDotGit reports whether name means .git somewhere, or is its GIT~1.
func isDotGit(name string) bool {
	name = foldName(name)
	return name == ".git" || name == "git~1"
}

// foldName is a name as file systems may take it: any case, without
// trailing dots and spaces (Windows) or the characters HFS+ ignores.
func foldName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff {
			return -1
		}
		return r
	}, name)
	return strings.ToLower(strings.TrimRight(name, ". "))
}

// inside turns a path git wrote into a clean workspace path, "" outside.
func (w *Workspace) inside(p string) string {
	if filepath.IsAbs(p) {
		rel, ok := relTo(w.dir, p)
		if !ok {
			// git writes real paths; the workspace may be named by a link.
			real, err := filepath.EvalSymlinks(w.dir)
			if err != nil {
				return ""
			}
			if rel, ok = relTo(real, p); !ok {
				return ""
			}
		}
		p = rel
	}
	c, err := Clean(p)
	if err != nil || c == "." {
		return ""
	}
	return c
}

// resolve follows the links of a clean workspace path one element at a
// time, as the kernel does (".." after a link climbs from its target), and
// returns the path with none left; without followLast a link in the last
// place is kept. False for a loop, an absolute link or one leading out.
func (w *Workspace) resolve(c string, followLast bool) (string, bool) {
	var done []string
	todo := strings.Split(c, "/")
	links := 0
	for len(todo) > 0 {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", false
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(append(done, part)...)
		info, err := w.root.Lstat(cur)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 || (len(todo) == 0 && !followLast) {
			// Missing parts are made as plain folders and files.
			done = append(done, part)
			continue
		}
		links++
		target, err := w.root.Readlink(cur)
		if err != nil || links > maxLinks || path.IsAbs(target) {
			return "", false
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", true
	}
	return path.Join(done...), true
}

// relTo returns p relative to dir in slash form, if p is inside dir.
func relTo(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
