package runner

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/workspace"
)

// settingsName is the settings file courier reads from the root.
const settingsName = "courier.toml"

// CheckLayout refuses a workspace that holds courier's control files or
// lies among them (a reply could rewrite the settings, answer for itself
// in inbox/ or change a journal), or is or holds the home folder (which
// holds what runs outside the sandbox: ~/.bashrc, ~/go/bin). Folders are
// compared by identity, symlinks resolved; parts not made yet are judged
// by the folder they will be made in. The one root a workspace may hold
// is its own .courier, which commands never see.
func (p Paths) CheckLayout(dir string) error {
	ws, err := os.Stat(dir)
	if err != nil {
		return nil // a missing workspace has its own error where it is opened
	}
	refuse := func(where string, home bool) error {
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = dir
		}
		return &LayoutError{Workspace: abs, Where: where, Home: home}
	}
	if top, err := os.Stat("/"); err == nil && os.SameFile(top, ws) {
		return refuse("is the top of the file system", true)
	}
	control := []struct{ name, path string }{
		{"the root", p.Root},
		{"sessions/", p.Sessions},
		{"inbox/", p.Inbox},
		{"outbox/", p.Outbox},
		{"the settings file " + settingsName, filepath.Join(p.Root, settingsName)},
	}
	// The root may be the workspace's own .courier.
	if real, err := realPath(p.Root); err == nil && filepath.Base(real) == workspace.CourierDir {
		if top, err := os.Stat(filepath.Dir(real)); err == nil && os.SameFile(top, ws) {
			control = nil
		}
	}
	for i, c := range control {
		if c.path == "" {
			continue
		}
		if inside, err := within(c.path, ws); err != nil || inside {
			return cmp.Or(err, refuse(fmt.Sprintf("holds %s (%s)", c.name, c.path), false))
		}
		if info, err := os.Stat(c.path); err == nil && i >= 1 && i <= 3 {
			if inside, err := within(dir, info); err != nil || inside {
				return cmp.Or(err, refuse(fmt.Sprintf("is inside %s (%s)", c.name, c.path), false))
			}
		}
	}
	if p.Home != "" && filepath.IsAbs(p.Home) {
		if inside, err := within(p.Home, ws); err != nil || inside {
			where := fmt.Sprintf("holds your home folder (%s)", p.Home)
			if home, err := os.Stat(p.Home); err == nil && os.SameFile(home, ws) {
				where = "is your home folder"
			}
			return cmp.Or(err, refuse(where, true))
		}
	}
	return nil
}

// LayoutError: the workspace holds courier's control files, or lies
// among them (Where says which), or is or holds the home folder (Home).
type LayoutError struct {
	Workspace, Where string
	Home             bool
}

func (e *LayoutError) Error() string {
	if e.Home {
		return fmt.Sprintf("the workspace %s %s, where commands could change your shell's startup files and the programs you run", e.Workspace, e.Where)
	}
	return fmt.Sprintf("the workspace %s %s, where a reply could rewrite courier's settings or its own next reply", e.Workspace, e.Where)
}

// within reports whether path, its symlinks resolved, is or is in dir.
func within(path string, dir fs.FileInfo) (bool, error) {
	real, err := realPath(path)
	if err != nil {
		return false, err
	}
	for p := real; ; p = filepath.Dir(p) {
		if info, err := os.Stat(p); err == nil && os.SameFile(info, dir) {
			return true, nil
		}
		if filepath.Dir(p) == p {
			return false, nil
		}
	}
}

// realPath resolves the symlinks of the part of path that exists.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(p) == p {
			return "", fmt.Errorf("resolve %s: %w", path, err)
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// Every courier root of the person is hidden from every command: another
// root's inbox answers for its sessions. Each root adds itself to a list
// in the person's state folder when courier uses it.

// maxRoots bounds the list courier reads.
const maxRoots = 1000

// CourierPlaces returns what of the person's courier roots, and the list
// of them (kept to those that exist), commands must not see.
func (p Paths) CourierPlaces(getenv func(string) string) []string {
	out, file := places(p.Root), ""
	if dir := getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		file = filepath.Join(dir, "courier", "roots")
	} else if home := getenv("HOME"); filepath.IsAbs(home) {
		file = filepath.Join(home, ".local", "state", "courier", "roots")
	}
	if file == "" || !filepath.IsAbs(p.Root) {
		return out
	}
	data, _ := os.ReadFile(file)
	listed := strings.Split(strings.TrimSpace(string(data)), "\n")
	roots := []string{p.Root}
	for _, r := range listed {
		if _, err := os.Stat(r); err == nil && filepath.IsAbs(r) && !slices.Contains(roots, r) && len(roots) < maxRoots {
			roots = append(roots, r)
		}
	}
	if !slices.Equal(roots, listed) && os.MkdirAll(filepath.Dir(file), 0o700) == nil {
		_ = atomicfile.Write(file, []byte(strings.Join(roots, "\n")+"\n"), 0o600)
	}
	for _, r := range roots[1:] {
		out = append(out, places(r)...)
	}
	return append(out, file)
}

// places are the folders of the root that commands must not see.
func places(root string) []string {
	if real, err := realPath(root); err == nil && filepath.Base(real) == workspace.CourierDir {
		return []string{real}
	}
	o := DefaultPaths(root)
	return []string{o.Sessions, o.Inbox, o.Outbox, filepath.Join(root, "cache")}
}
