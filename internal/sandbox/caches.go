package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Commands write none of the person's folders, yet builds need caches, and
// a cache that starts empty makes a session's first build many times slower
// than the same build outside courier. So commands see the person's own
// caches, read-only, under a writable layer of the session's own (an
// overlay mount): a build starts warm, and what it writes stays in the
// session's layer, out of reach of the person and of every other session.
//
// Each session's layer is a folder under Options.Caches:
//
//	Caches/sessions/ID/tmp          TMPDIR
//	Caches/sessions/ID/NAME         the writable layer of cache NAME
//	Caches/sessions/ID/.work/NAME   the overlay's own work folder
//
// A cache of the person's is seen where the person has it, so that paths
// recorded in it (Go's build cache keys name source folders) still match.
// A cache the person lacks, and every cache where overlay mounts are
// unavailable, is the layer folder itself: private and empty at first.

// Cache is one of the person's tool caches.
type Cache struct {
	// Name is its layer folder's name.
	Name string `json:"name"`
	// Env is the variable that points tools at it.
	Env string `json:"env"`
	// Person is the person's folder, "" when they have none.
	Person string `json:"person,omitempty"`
}

// PersonCaches returns the person's tool caches from their environment:
// Go's build and module caches, pip's and npm's caches and cargo's
// registry, each where the tool itself would look.
func PersonCaches(getenv func(string) string) []Cache {
	home := getenv("HOME")
	under := func(env, def string) string {
		if v := getenv(env); filepath.IsAbs(v) {
			return v
		}
		if !filepath.IsAbs(home) {
			return ""
		}
		return filepath.Join(home, def)
	}
	xdg := under("XDG_CACHE_HOME", ".cache")
	gopath, _, _ := strings.Cut(getenv("GOPATH"), string(os.PathListSeparator))
	mods := getenv("GOMODCACHE")
	switch {
	case filepath.IsAbs(mods):
	case filepath.IsAbs(gopath):
		mods = filepath.Join(gopath, "pkg", "mod")
	case filepath.IsAbs(home):
		mods = filepath.Join(home, "go", "pkg", "mod")
	}
	cargo := under("CARGO_HOME", ".cargo")
	var gocache, pip string
	if v := getenv("GOCACHE"); filepath.IsAbs(v) {
		gocache = v
	} else if xdg != "" {
		gocache = filepath.Join(xdg, "go-build")
	}
	if v := getenv("PIP_CACHE_DIR"); filepath.IsAbs(v) {
		pip = v
	} else if xdg != "" {
		pip = filepath.Join(xdg, "pip")
	}
	caches := []Cache{
		{Name: "go-build", Env: "GOCACHE", Person: gocache},
		{Name: "go-mod", Env: "GOMODCACHE", Person: mods},
		{Name: "pip", Env: "PIP_CACHE_DIR", Person: pip},
		{Name: "npm", Env: "npm_config_cache", Person: under("npm_config_cache", ".npm")},
		{Name: "cargo-registry", Person: joinIf(cargo, "registry")},
	}
	for i, c := range caches {
		if info, err := os.Stat(c.Person); c.Person == "" || err != nil || !info.IsDir() {
			caches[i].Person = ""
		}
	}
	return caches
}

func joinIf(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

// privateFolders are the tool folders every session gets empty and of its
// own: what a command installs with pip install --user (PYTHONUSERBASE, so
// a usercustomize.py one session plants never runs in another), cargo's
// home (its registry is a cache of the person's, inside it), and the
// generic cache folder.
var privateFolders = []Cache{
	{Name: "python", Env: "PYTHONUSERBASE"},
	{Name: "cargo", Env: "CARGO_HOME"},
	{Name: "xdg", Env: "XDG_CACHE_HOME"},
}

// cacheView is a cache as a command sees it.
type cacheView struct {
	Cache
	view  string // where the command sees it
	layer string // the session's writable layer
	work  string // the overlay's work folder, "" without an overlay
}

// caches returns the session's caches as its commands see them: the
// person's under an overlay where the kernel allows it, else the layer
// alone. Cargo's registry is seen inside cargo's home.
func (o Options) caches() []cacheView {
	if o.Caches == "" {
		return nil
	}
	layer := o.Layer()
	var out []cacheView
	for _, c := range append(append([]Cache(nil), privateFolders...), o.Tools...) {
		v := cacheView{Cache: c, view: filepath.Join(layer, c.Name), layer: filepath.Join(layer, c.Name)}
		if c.Person != "" && o.Kernel.Namespaces && o.Kernel.Overlay {
			v.view, v.work = c.Person, filepath.Join(layer, ".work", c.Name)
		}
		if c.Name == "cargo-registry" {
			v.view = filepath.Join(layer, "cargo", "registry")
			if v.work == "" {
				v.layer = v.view
			}
		}
		out = append(out, v)
	}
	return out
}

// ToolVars names the variables ToolEnv sets, for courier config.
func ToolVars() []string {
	names := []string{"GOFLAGS", "TMPDIR"}
	for _, c := range append(append([]Cache(nil), privateFolders...), PersonCaches(func(string) string { return "" })...) {
		if c.Env != "" {
			names = append(names, c.Env)
		}
	}
	return names
}

// ToolEnv returns the variables that point the command's tools at the
// session's caches (nil without Options.Caches); kept reads the variables
// the command keeps, whose GOFLAGS is extended rather than replaced.
func ToolEnv(o Options, kept func(string) string) map[string]string {
	if o.Caches == "" {
		return nil
	}
	env := map[string]string{"TMPDIR": o.TempDir()}
	for _, c := range o.caches() {
		if c.Env != "" {
			env[c.Env] = c.view
		}
	}
	// Go makes module files read-only; -modcacherw lets courier remove a
	// session's layer without changing modes first.
	env["GOFLAGS"] = strings.TrimSpace(kept("GOFLAGS") + " -modcacherw")
	return env
}

// Prepare makes the session's layer folders, which must exist before the
// launcher mounts them. Commands write inside them, so courier never
// follows a link there: every folder is made through an os.Root of
// Caches, which refuses a path that leaves it.
func Prepare(o Options) error {
	if o.Caches == "" {
		return nil
	}
	if err := os.MkdirAll(o.Caches, 0o700); err != nil {
		return fmt.Errorf("create the session's cache layer: %w", err)
	}
	root, err := os.OpenRoot(o.Caches)
	if err != nil {
		return fmt.Errorf("create the session's cache layer: %w", err)
	}
	defer root.Close()
	dirs := []string{o.TempDir()}
	for _, c := range o.caches() {
		dirs = append(dirs, c.layer)
		if c.work != "" {
			dirs = append(dirs, c.work)
		}
	}
	for _, d := range dirs {
		rel, err := filepath.Rel(o.Caches, d)
		if err == nil {
			err = root.MkdirAll(rel, 0o700)
		}
		if err != nil {
			return fmt.Errorf("create the session's cache layer: %w", err)
		}
	}
	return nil
}

// RemoveLayer removes a session's layer under caches, never following a
// link a command left in it. The overlay leaves folders without any
// permission, and Go's module cache read-only ones: each is made the
// owner's again first.
func RemoveLayer(caches, session string) error {
	root, err := os.OpenRoot(caches)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("remove the session's cache layer: %w", err)
	}
	defer root.Close()
	if err := removeTree(root, filepath.Join("sessions", filepath.Base(session))); err != nil {
		return fmt.Errorf("remove the session's cache layer: %w", err)
	}
	return nil
}

// removeTree removes name in root, each folder made the owner's first.
func removeTree(root *os.Root, name string) error {
	if _, err := root.Lstat(name); os.IsNotExist(err) {
		return nil
	}
	_ = fs.WalkDir(root.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = root.Chmod(p, 0o700)
		}
		return nil
	})
	return root.RemoveAll(name)
}

// LayerSessions lists the sessions that have a layer under caches.
func LayerSessions(caches string) []string {
	entries, _ := os.ReadDir(filepath.Join(caches, "sessions"))
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids
}
