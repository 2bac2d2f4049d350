package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// Commands may write none of the person's folders, yet builds need caches
// (Go's build and module caches, cargo's registry, npm's and pip's caches)
// and temporary space. Options.Caches is courier's own folder for them,
// outside the workspace and the person's folders; the tools are pointed at
// it through their variables:
//
//	Caches/tools/go        GOPATH (modules in go/pkg/mod: GOMODCACHE)
//	Caches/tools/go-build  GOCACHE
//	Caches/tools/cargo     CARGO_HOME
//	Caches/tools/npm       npm_config_cache
//	Caches/tools/pip       PIP_CACHE_DIR
//	Caches/tools/python    PYTHONUSERBASE (pip install --user)
//	Caches/tools/xdg       XDG_CACHE_HOME
//	Caches/tmp/SESSION     TMPDIR, one per session
var toolFolders = []struct{ dir, env string }{
	{"go", "GOPATH"},
	{"go/pkg/mod", "GOMODCACHE"},
	{"go-build", "GOCACHE"},
	{"cargo", "CARGO_HOME"},
	{"npm", "npm_config_cache"},
	{"pip", "PIP_CACHE_DIR"},
	{"python", "PYTHONUSERBASE"},
	{"xdg", "XDG_CACHE_HOME"},
}

// ToolVars names the variables ToolEnv sets, for courier config.
func ToolVars() []string {
	names := []string{"GOFLAGS", "GOPROXY", "TMPDIR"}
	for _, f := range toolFolders {
		names = append(names, f.env)
	}
	return names
}

func toolDirs(o Options) []string {
	var dirs []string
	for _, f := range toolFolders {
		dirs = append(dirs, filepath.Join(o.ToolsDir(), filepath.FromSlash(f.dir)))
	}
	return dirs
}

// ToolEnv returns the variables that point the command's tools at
// courier's caches (nil without Options.Caches). getenv reads the person's
// environment, to find their Go module cache; kept reads the variables the
// command keeps, whose GOFLAGS and GOPROXY are extended rather than
// replaced.
//
// Go modules the person has downloaded stay usable offline: their module
// cache is offered read-only as the first GOPROXY, so a build copies what
// it needs into courier's cache instead of fetching it again.
func ToolEnv(o Options, getenv, kept func(string) string) map[string]string {
	if o.Caches == "" {
		return nil
	}
	env := map[string]string{"TMPDIR": o.TempDir()}
	for _, f := range toolFolders {
		env[f.env] = filepath.Join(o.ToolsDir(), filepath.FromSlash(f.dir))
	}
	// Go makes module files read-only; -modcacherw lets the person remove
	// courier's cache folder with rm -r.
	env["GOFLAGS"] = strings.TrimSpace(kept("GOFLAGS") + " -modcacherw")
	if mods := personGoModCache(getenv); mods != "" {
		proxy := kept("GOPROXY")
		if proxy == "" {
			proxy = "https://proxy.golang.org,direct"
		}
		env["GOPROXY"] = "file://" + filepath.ToSlash(filepath.Join(mods, "cache", "download")) + "," + proxy
	}
	return env
}

// personGoModCache returns the person's Go module cache when it holds
// downloads, or "".
func personGoModCache(getenv func(string) string) string {
	dir := getenv("GOMODCACHE")
	if dir == "" {
		gopath := getenv("GOPATH")
		if gopath == "" {
			if home := getenv("HOME"); home != "" {
				gopath = filepath.Join(home, "go")
			}
		}
		if first, _, _ := strings.Cut(gopath, string(os.PathListSeparator)); first != "" {
			dir = filepath.Join(first, "pkg", "mod")
		}
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	if info, err := os.Stat(filepath.Join(dir, "cache", "download")); err != nil || !info.IsDir() {
		return ""
	}
	return dir
}
