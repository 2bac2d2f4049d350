package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// CourierDir is courier's own folder at the top of a project (sessions,
// settings): file commands never read or write it, walks never enter it,
// the sandbox hides it.
const CourierDir = ".courier"

// ProtectedError reports a write into a .git, which holds what git runs
// (hooks, core.fsmonitor, aliases), or, with Dir CourierDir, any access to
// courier's own folder.
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

// CheckWrite refuses with a ProtectedError a write, removal or mode change
// in a .git (by any name a file system takes for it, at any depth, through
// links) or any other git folder (see inGitDir).
func (w *Workspace) CheckWrite(p string) error {
	c, err := Clean(p)
	if err != nil {
		return err
	}
	return w.protect(p, c, true)
}

// protect refuses a write of c (written p); with followLast, a link in the
// last place is judged by its target too.
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

// inGitDir reports whether c, with no link left, lies below a folder
// holding a HEAD: a git folder whatever its name (one a "gitdir:" file
// names). The workspace itself is not taken for one.
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

// isDotGit reports whether a name means .git on some file system (see
// foldName), or is its 8.3 short name GIT~1.
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
