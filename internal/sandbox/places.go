package sandbox

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// secretPlaces are where people keep credentials, relative to their home
// folder: commands see them empty. Shell histories are here too, since
// people type tokens on command lines.
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

// systemSockets are sockets that give power over the machine to whoever
// can connect: container engines (root on the host) and the system bus
// (through polkit, an active desktop user may reboot or reconfigure).
var systemSockets = []string{
	"/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock",
	"/run/podman/podman.sock", "/run/snapd.socket", "/run/dbus/system_bus_socket",
}

// SocketEnv is what of the person's environment says where the sockets
// of their session are.
type SocketEnv struct {
	RuntimeDir  string `json:"runtimeDir,omitempty"`  // XDG_RUNTIME_DIR
	SSHAuthSock string `json:"sshAuthSock,omitempty"` // SSH_AUTH_SOCK
}

// SocketEnvOf reads a SocketEnv from the person's environment.
func SocketEnvOf(getenv func(string) string) SocketEnv {
	return SocketEnv{RuntimeDir: getenv("XDG_RUNTIME_DIR"), SSHAuthSock: getenv("SSH_AUTH_SOCK")}
}

// Existing returns the places of the person's session sockets that exist
// now: the runtime folder (ssh and gpg agents, the session bus, the
// keyring), the SSH agent's socket and its folder, and the system sockets
// above. The private /tmp hides the sockets kept there (X11, agents).
func (e SocketEnv) Existing() []string {
	var out []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) || slices.Contains(out, p) {
			return
		}
		if _, err := os.Lstat(p); err == nil {
			out = append(out, filepath.Clean(p))
		}
	}
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

// broad reports whether hiding dir would hide more than a socket's own
// folder: the root, the system's runtime and temporary folders, a home.
func broad(dir string) bool {
	switch filepath.Clean(dir) {
	case "/", "/run", "/var/run", "/tmp", "/var/tmp", "/dev/shm", "/home", "/root":
		return true
	}
	return filepath.Dir(filepath.Clean(dir)) == "/home"
}

// toolPlaces are the places under home that hold toolchains, and the few
// configuration files builds read: a private home shows them read-only.
var toolPlaces = []string{
	".rustup", ".cargo/bin", "go/bin", ".pyenv", ".nvm", ".volta", ".local/bin",
	".sdkman", ".deno", ".bun", ".asdf", ".nodenv", ".rbenv", ".m2/repository",
	".gitconfig", ".config/git/config", ".config/git/ignore", ".cargo/config.toml",
}

// toolRoots are the variables that name a toolchain's folder.
var toolRoots = []string{"GOROOT", "JAVA_HOME", "RUSTUP_HOME", "PYENV_ROOT", "NVM_DIR"}

// ToolFolders returns the places of the person's a command sees read-only:
// every folder on PATH, the toolchains the environment names, the tool
// places of the home folder, and extra (the read_only setting). A place
// that is or holds a secret place (PATH=~/.ssh) or the home itself is never
// shown: see the view.
func ToolFolders(getenv func(string) string, extra []string) []string {
	var out []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if slices.Contains(out, p) {
			return
		}
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	for _, p := range filepath.SplitList(getenv("PATH")) {
		add(p)
		// A version manager's shims (pyenv, rbenv, nodenv, asdf) run the
		// manager and its toolchains from the folder that holds them.
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

// GitPaths returns what of the repositories in workspace a command must
// not change: each of dotgits (the workspace paths, slash-separated, of
// its .git folders, files and links at any depth); for a "gitdir:"
// pointer file (a worktree, a submodule), the folder it names; and the
// common folder a git folder names in its commondir file (the main
// repository's .git, for a worktree).
func GitPaths(workspace string, dotgits []string) []string {
	var paths []string
	add := func(p string) {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	for _, rel := range dotgits {
		dotgit := filepath.Join(workspace, filepath.FromSlash(rel))
		gitdir := dotgit
		add(dotgit)
		if info, err := os.Stat(dotgit); err == nil && info.Mode().IsRegular() {
			if gitdir = pointer(dotgit, "gitdir:"); gitdir == "" {
				continue
			}
			gitdir = resolve(filepath.Dir(dotgit), gitdir)
			add(gitdir)
		}
		if common := pointer(filepath.Join(gitdir, "commondir"), ""); common != "" {
			add(resolve(gitdir, common))
		}
	}
	return paths
}

// pointer reads the first line of a small git pointer file and returns what
// follows prefix, or "". Commands can write these files: one that is not a
// regular file (a FIFO would block the read for ever) reads as nothing.
func pointer(path, prefix string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return ""
	}
	data, _ := io.ReadAll(io.LimitReader(f, 4096))
	line, _, _ := bytes.Cut(data, []byte("\n"))
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(line)), prefix)
	if !ok {
		return ""
	}
	return strings.TrimSpace(rest)
}

func resolve(base, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}
