package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Commands write none of the person's folders, yet a cold cache makes a
// first build many times slower. So commands see the person's caches
// under a writable overlay layer of the session's own: builds start warm,
// and what they write stays in that layer, under Options.Caches:
//
//	Caches/sessions/ID/tmp          TMPDIR
//	Caches/sessions/ID/NAME         the writable layer of cache NAME
//	Caches/sessions/ID/.work/NAME   the overlay's own work folder
//
// A cache is seen where the person has it, so paths recorded in it still
// match. Without the person's cache, or overlays, it is the layer folder
// itself: private and empty at first.

// Cache is one of the person's tool caches.
type Cache struct {
	Name   string `json:"name"`             // its layer folder's name
	Env    string `json:"env"`              // the variable pointing tools at it
	Person string `json:"person,omitempty"` // the person's folder, if any
}

// PersonCaches returns the person's Go, pip, npm and cargo caches.
func PersonCaches(getenv func(string) string) []Cache {
	// under is the folder env names, or else def below base.
	under := func(env, base, def string) string {
		if v := getenv(env); env != "" && filepath.IsAbs(v) {
			return v
		}
		if !filepath.IsAbs(base) {
			return ""
		}
		return filepath.Join(base, def)
	}
	home := getenv("HOME")
	xdg := under("XDG_CACHE_HOME", home, ".cache")
	gopath, _, _ := strings.Cut(getenv("GOPATH"), string(os.PathListSeparator))
	if !filepath.IsAbs(gopath) {
		gopath = under("", home, "go")
	}
	caches := []Cache{
		{Name: "go-build", Env: "GOCACHE", Person: under("GOCACHE", xdg, "go-build")},
		{Name: "go-mod", Env: "GOMODCACHE", Person: under("GOMODCACHE", gopath, filepath.Join("pkg", "mod"))},
		{Name: "pip", Env: "PIP_CACHE_DIR", Person: under("PIP_CACHE_DIR", xdg, "pip")},
		{Name: "npm", Env: "npm_config_cache", Person: under("npm_config_cache", home, ".npm")},
		{Name: "cargo-registry", Person: under("", under("CARGO_HOME", home, ".cargo"), "registry")},
	}
	for i, c := range caches {
		if info, err := os.Stat(c.Person); c.Person == "" || err != nil || !info.IsDir() {
			caches[i].Person = ""
		}
	}
	return caches
}

// privateFolders are the folders each session gets empty: TMPDIR, pip's
// --user (a planted usercustomize.py stays there), cargo's home, XDG's.
var privateFolders = []Cache{
	{Name: "tmp", Env: "TMPDIR"},
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

// caches returns the session's caches as its commands see them.
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
	names := []string{"GOFLAGS"}
	for _, c := range append(append([]Cache(nil), privateFolders...), PersonCaches(func(string) string { return "" })...) {
		if c.Env != "" {
			names = append(names, c.Env)
		}
	}
	return names
}

// ToolEnv points tools at the session's caches, extending kept's GOFLAGS.
func ToolEnv(o Options, kept func(string) string) map[string]string {
	if o.Caches == "" {
		return nil
	}
	env := map[string]string{}
	for _, c := range o.caches() {
		if c.Env != "" {
			env[c.Env] = c.view
		}
	}
	// -modcacherw: module files courier can remove with the layer.
	env["GOFLAGS"] = strings.TrimSpace(kept("GOFLAGS") + " -modcacherw")
	return env
}

// Prepare makes the session's layer folders for the launcher to mount,
// through an os.Root: commands write there, and may leave links.
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
	var dirs []string
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

// RemoveLayer removes a session's layer under caches.
func RemoveLayer(caches, session string) error {
	if err := removeTree(caches, filepath.Join("sessions", filepath.Base(session))); err != nil {
		return fmt.Errorf("remove the session's cache layer: %w", err)
	}
	return nil
}

// removeTree removes name in dir, each folder made the owner's first:
// overlays leave some without permissions, Go's module cache read-only.
func removeTree(dir, name string) error {
	root, err := os.OpenRoot(dir) // never following a link a command left
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	defer root.Close()
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

// secretPlaces are where people keep credentials under their home, shell
// histories included (tokens typed on command lines): seen empty.
var secretPlaces = []string{
	// keys, agents, password stores, keyrings
	".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".pki",
	".local/share/kwalletd", ".config/keepassxc",
	// cloud and platform credentials
	".aws", ".azure", ".config/gcloud", ".kube", ".docker",
	".config/containers/auth.json", ".oci", ".config/doctl", ".vault-token",
	".terraform.d/credentials.tfrc.json", ".config/gh", ".config/hub",
	".config/op", ".config/heroku", ".netrc", ".git-credentials",
	".config/git/credentials", ".pgpass", ".my.cnf", ".s3cfg",
	// package registries
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".config/pip/pip.conf",
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
	".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
	// the keys of coding agents and LLM tools, model hubs
	".config/openai", ".codex", ".claude", ".claude.json", ".gemini", ".config/io.datasette.llm",
	".ollama", ".cache/huggingface", ".huggingface", ".config/github-copilot", ".config/anthropic",
	// browser profiles and mail
	".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium",
	".config/BraveSoftware", ".config/microsoft-edge", ".config/vivaldi",
	".config/opera", "snap/firefox", "snap/chromium",
	// shell and tool histories
	".bash_history", ".zsh_history", ".histfile", ".local/share/fish/fish_history",
	".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
	".sqlite_history", ".lesshst",
}

// SecretPlaces returns the secret places under home that exist.
func SecretPlaces(home string) []string {
	if home == "" || !filepath.IsAbs(home) {
		return nil
	}
	var out []string
	for _, p := range secretPlaces {
		full := filepath.Join(home, filepath.FromSlash(p))
		if _, err := os.Lstat(full); err == nil {
			out = append(out, full)
		}
	}
	return out
}

// systemSockets give power over the machine: container engines, polkit.
var systemSockets = []string{
	"/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock",
	"/run/podman/podman.sock", "/run/snapd.socket", "/run/dbus/system_bus_socket",
}

// SocketEnv is where the person's environment puts the session's sockets.
type SocketEnv struct {
	RuntimeDir  string `json:"runtimeDir,omitempty"`  // XDG_RUNTIME_DIR
	SSHAuthSock string `json:"sshAuthSock,omitempty"` // SSH_AUTH_SOCK
}

// Existing returns the session's socket places there now: the runtime
// folder (agents, buses, keyring), the SSH agent's, the system sockets.
func (e SocketEnv) Existing() []string {
	var out []string
	add := func(p string) { out = addExisting(out, p, os.Lstat) }
	add(e.RuntimeDir)
	add("/run/user/" + strconv.Itoa(os.Getuid()))
	if e.SSHAuthSock != "" {
		add(e.SSHAuthSock)
		if dir := filepath.Dir(e.SSHAuthSock); !broad(dir) {
			add(dir)
		}
	}
	for _, s := range systemSockets {
		add(s)
	}
	return out
}

// addExisting appends p, clean, to out if it is absolute, new and there.
func addExisting(out []string, p string, stat func(string) (fs.FileInfo, error)) []string {
	if p = filepath.Clean(p); !filepath.IsAbs(p) || slices.Contains(out, p) {
		return out
	}
	if _, err := stat(p); err != nil {
		return out
	}
	return append(out, p)
}

// broad reports whether hiding dir would hide more than a socket's folder.
func broad(dir string) bool {
	switch filepath.Clean(dir) {
	case "/", "/run", "/var/run", "/tmp", "/var/tmp", "/dev/shm", "/home", "/root":
		return true
	}
	return filepath.Dir(filepath.Clean(dir)) == "/home"
}

// toolPlaces are the toolchains and settings a private home shows.
var toolPlaces = []string{
	".rustup", ".cargo/bin", "go/bin", ".pyenv", ".nvm", ".volta", ".local/bin",
	".sdkman", ".deno", ".bun", ".asdf", ".nodenv", ".rbenv", ".m2/repository",
	".gitconfig", ".config/git/config", ".config/git/ignore", ".cargo/config.toml",
}

// toolRoots are the variables that name a toolchain's folder.
var toolRoots = []string{"GOROOT", "JAVA_HOME", "RUSTUP_HOME", "PYENV_ROOT", "NVM_DIR"}

// ToolFolders returns the places a command sees read-only: PATH, the
// toolchains the environment names, toolPlaces, and extra (read_only).
func ToolFolders(getenv func(string) string, extra []string) []string {
	var out []string
	add := func(p string) { out = addExisting(out, p, os.Stat) }
	for _, p := range filepath.SplitList(getenv("PATH")) {
		add(p)
		// A version manager's shims run it from the folder above.
		if filepath.Base(p) == "shims" {
			add(filepath.Dir(p))
		}
	}
	for _, v := range toolRoots {
		add(getenv(v))
	}
	if home := getenv("HOME"); home != "" {
		for _, p := range toolPlaces {
			add(filepath.Join(home, filepath.FromSlash(p)))
		}
	}
	for _, p := range extra {
		add(p)
	}
	return out
}
