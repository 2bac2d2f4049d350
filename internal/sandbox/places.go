package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// secretPlaces are where people keep credentials under their home, shell
// histories included (tokens typed on command lines): commands see them
// empty.
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

// systemSockets give power over the machine to whoever connects:
// container engines, and the system bus (polkit).
var systemSockets = []string{
	"/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock",
	"/run/podman/podman.sock", "/run/snapd.socket", "/run/dbus/system_bus_socket",
}

// SocketEnv is where the person's environment says their session's
// sockets are.
type SocketEnv struct {
	RuntimeDir  string `json:"runtimeDir,omitempty"`  // XDG_RUNTIME_DIR
	SSHAuthSock string `json:"sshAuthSock,omitempty"` // SSH_AUTH_SOCK
}

// SocketEnvOf reads a SocketEnv from the person's environment.
func SocketEnvOf(getenv func(string) string) SocketEnv {
	return SocketEnv{RuntimeDir: getenv("XDG_RUNTIME_DIR"), SSHAuthSock: getenv("SSH_AUTH_SOCK")}
}

// Existing returns the session's socket places that exist now: the
// runtime folder (agents, the session bus, the keyring), the SSH agent's
// socket and folder, and the system sockets. The private /tmp hides those
// kept there.
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

// broad reports whether hiding dir would hide more than a socket's own
// folder.
func broad(dir string) bool {
	switch filepath.Clean(dir) {
	case "/", "/run", "/var/run", "/tmp", "/var/tmp", "/dev/shm", "/home", "/root":
		return true
	}
	return filepath.Dir(filepath.Clean(dir)) == "/home"
}

// toolPlaces are the toolchains and configuration files under home that
// a private home shows read-only.
var toolPlaces = []string{
	".rustup", ".cargo/bin", "go/bin", ".pyenv", ".nvm", ".volta", ".local/bin",
	".sdkman", ".deno", ".bun", ".asdf", ".nodenv", ".rbenv", ".m2/repository",
	".gitconfig", ".config/git/config", ".config/git/ignore", ".cargo/config.toml",
}

// toolRoots are the variables that name a toolchain's folder.
var toolRoots = []string{"GOROOT", "JAVA_HOME", "RUSTUP_HOME", "PYENV_ROOT", "NVM_DIR"}

// ToolFolders returns the places a command sees read-only: the folders on
// PATH, the toolchains the environment names, toolPlaces, and extra (the
// read_only setting). The view never shows home or a secret place.
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
