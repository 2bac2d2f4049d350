package sandbox

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestRequestRoundTrip(t *testing.T) {
	tests := []request{
		{Options: Options{}, Env: []string{}},
		{Options: Options{Writable: []string{"/work/ws", "/other dir"}, ReadOnly: []string{"/work/ws/.git"}, Hide: []string{"/run/user/1000"},
			Home: "/home/me", HomeReadable: true, Show: []string{"/home/me/.cargo/bin"}, Caches: "/r/cache", Session: "s1",
			Tools: []Cache{{Name: "go-build", Env: "GOCACHE", Person: "/home/me/.cache/go-build"}}, Limits: Limits{Processes: 10, Memory: 1 << 30, Cgroups: []string{"/sys/fs/cgroup/x"}},
			NoNetwork: true, Strict: true, Kernel: Kernel{Landlock: 7, Namespaces: true, Network: true, Seccomp: true, Overlay: true, Cgroup: true}},
			Env: []string{"PATH=/usr/bin", "LD_PRELOAD=./evil.so"}},
		{Options: Options{Writable: []string{"--", "-c\n\x00"}}, Env: []string{"A=b\nc=d"}},
	}
	for _, req := range tests {
		data, err := encodeRequest(req.Options, req.Env)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readRequest(bytes.NewReader(data))
		if err != nil || !reflect.DeepEqual(got, req) {
			t.Errorf("round trip of %+v gave %+v, %v", req, got, err)
		}
	}
	if _, err := readRequest(strings.NewReader("not json")); err == nil {
		t.Error("readRequest accepted garbage")
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--", "/bin/sh", "-c", "echo -- x"}, []string{"/bin/sh", "-c", "echo -- x"}},
		{nil, nil},
		{[]string{"/bin/true"}, nil},
		{[]string{"--"}, nil},
		{[]string{"--", "relative/sh"}, nil},
	}
	for _, tt := range tests {
		got, err := parseArgs(tt.args)
		if !reflect.DeepEqual(got, tt.want) || (err == nil) != (tt.want != nil) {
			t.Errorf("parseArgs(%q) = %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
}

func TestMainRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"/bin/true"}, {"--"}, {"--", "relative/sh"}} {
		var stderr bytes.Buffer
		code := Main(args, &stderr)
		if code != ExitFailure || !strings.HasPrefix(stderr.String(), "courier: error: sandbox: ") {
			t.Errorf("Main(%q) = %d with %q, want %d and a courier error line", args, code, stderr.String(), ExitFailure)
		}
	}
}

func TestToolEnv(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".cache/go-build", "go/pkg/mod", ".npm"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	kept := func(k string) string { return map[string]string{"GOFLAGS": "-mod=mod"}[k] }
	layer := "/r/cache/sessions/abc"
	private := map[string]string{
		"TMPDIR": layer + "/tmp", "PYTHONUSERBASE": layer + "/python", "CARGO_HOME": layer + "/cargo", "XDG_CACHE_HOME": layer + "/xdg",
		"GOFLAGS": "-mod=mod -modcacherw", "PIP_CACHE_DIR": layer + "/pip",
	}
	tests := []struct {
		name string
		k    Kernel
		want map[string]string
	}{
		{"the person's caches under the session's layer", Kernel{Namespaces: true, Overlay: true}, map[string]string{
			"GOCACHE": filepath.Join(home, ".cache/go-build"), "GOMODCACHE": filepath.Join(home, "go/pkg/mod"), "npm_config_cache": filepath.Join(home, ".npm")}},
		{"without overlay, the session's empty caches", Kernel{Namespaces: true}, map[string]string{
			"GOCACHE": layer + "/go-build", "GOMODCACHE": layer + "/go-mod", "npm_config_cache": layer + "/npm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Caches: "/r/cache", Session: "abc", Tools: PersonCaches(getenv), Kernel: tt.k}
			want := maps.Clone(private)
			maps.Copy(want, tt.want)
			if got := ToolEnv(opts, kept); !reflect.DeepEqual(got, want) {
				t.Errorf("ToolEnv =\n%v\nwant\n%v", got, want)
			}
			for name := range want {
				if !slices.Contains(ToolVars(), name) {
					t.Errorf("ToolVars lacks %s", name)
				}
			}
		})
	}
	if got := ToolEnv(Options{}, kept); got != nil {
		t.Errorf("without caches ToolEnv = %v, want nothing", got)
	}
}

func TestSecretPlacesExist(t *testing.T) {
	home := t.TempDir()
	for _, p := range []string{".ssh/id_ed25519", ".aws/credentials", ".netrc"} {
		full := filepath.Join(home, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := SecretPlaces(home)
	want := []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), filepath.Join(home, ".netrc")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SecretPlaces = %q, want %q", got, want)
	}
	if SecretPlaces("relative") != nil || SecretPlaces("") != nil {
		t.Error("SecretPlaces of no absolute home is not empty")
	}
}

func TestSessionSocketsHideTheAgentsFolderUnlessBroad(t *testing.T) {
	dir := t.TempDir()
	agentDir := filepath.Join(dir, "ssh-XXXX")
	if err := os.Mkdir(agentDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(agentDir, "agent.1")
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got := SocketEnv{SSHAuthSock: sock}.Existing()
	if !slices.Contains(got, sock) || !slices.Contains(got, agentDir) {
		t.Errorf("Existing = %q, want the agent's socket and its folder", got)
	}
	if got := (SocketEnv{SSHAuthSock: "/tmp/agent.sock"}).Existing(); slices.Contains(got, "/tmp") {
		t.Errorf("Existing = %q hides all of /tmp", got)
	}
}

func TestCheckAndMissingLayers(t *testing.T) {
	all := Kernel{Landlock: 7, Namespaces: true, Network: true, Seccomp: true, Overlay: true}
	tests := []struct {
		name    string
		opts    Options
		missing []string
		err     string
	}{
		{"every layer", Options{Kernel: all, Strict: true}, nil, ""},
		{"every layer, network cut", Options{Kernel: all, Strict: true, NoNetwork: true}, nil, ""},
		{"network layers unneeded while the network is on", Options{Kernel: Kernel{Landlock: 7, Namespaces: true, Seccomp: true}, Strict: true}, nil, ""},
		{"no user namespace, auto", Options{Kernel: Kernel{Landlock: 7, Seccomp: true}},
			[]string{"user namespace", "mount namespace", "pid namespace", "ipc namespace"}, ""},
		{"no user namespace, strict", Options{Kernel: Kernel{Landlock: 7, Seccomp: true}, Strict: true},
			[]string{"user namespace", "mount namespace", "pid namespace", "ipc namespace"}, `sandbox = "strict" and this kernel does not allow user namespace, mount namespace, pid namespace, ipc namespace`},
		{"network cut by landlock alone", Options{Kernel: Kernel{Landlock: 7, Seccomp: true}, NoNetwork: true},
			[]string{"user namespace", "mount namespace", "pid namespace", "ipc namespace", "network namespace"}, ""},
		{"network cannot be cut", Options{Kernel: Kernel{Landlock: 3}, NoNetwork: true},
			[]string{"user namespace", "mount namespace", "pid namespace", "ipc namespace", "network namespace", "unix socket filter", "seccomp filter", "landlock scopes"}, "network = false, but"},
		{"old landlock, strict", Options{Kernel: Kernel{Landlock: 5, Namespaces: true, Seccomp: true}, Strict: true},
			[]string{"landlock scopes"}, `does not allow landlock scopes`},
		{"no overlay, strict: only slower", Options{Kernel: Kernel{Landlock: 7, Namespaces: true, Seccomp: true}, Caches: "/c", Strict: true},
			[]string{"warm caches"}, ""},
		{"no cgroup as root or not", Options{Kernel: all, Limits: Limits{Processes: 5}},
			missingLimits(), ""},
		{"nothing confines, auto", Options{Kernel: Kernel{Unconfined: "commands cannot be confined on plan9"}}, []string{"sandbox"}, ""},
		{"nothing confines, strict", Options{Kernel: Kernel{Unconfined: "commands cannot be confined on plan9"}, Strict: true},
			[]string{"sandbox"}, "commands cannot be confined on plan9; the sandbox settings forbid running them unconfined"},
		{"nothing confines, network cut", Options{Kernel: Kernel{Unconfined: "commands cannot be confined on plan9"}, NoNetwork: true},
			[]string{"sandbox"}, "forbid running them unconfined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, l := range Missing(tt.opts) {
				names = append(names, l.Name)
			}
			if !reflect.DeepEqual(names, tt.missing) {
				t.Errorf("missing %q, want %q", names, tt.missing)
			}
			err := Check(tt.opts)
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("Check = %v, want an error with %q", err, tt.err)
			}
		})
	}
}

// missingLimits is what an ordinary user lacks without a control group
// (nothing: resource limits hold) and root (the limits).
func missingLimits() []string {
	if os.Getuid() == 0 {
		return []string{"limits"}
	}
	return nil
}

// BenchmarkSecretPlaces is what looking the secret places up costs each
// command: one lstat per place, a small part of starting the launcher.
func BenchmarkSecretPlaces(b *testing.B) {
	home := b.TempDir()
	for _, p := range []string{".ssh", ".aws", ".config/gh", ".docker"} {
		if err := os.MkdirAll(filepath.Join(home, p), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if len(SecretPlaces(home)) != 3 {
			b.Fatal("want 3 places")
		}
	}
}

// The session's sockets are looked up when asked, not when the settings
// are read: an agent started later is found.
func TestSocketEnvFindsSocketsMadeLater(t *testing.T) {
	dir := t.TempDir()
	agentDir := filepath.Join(dir, "ssh-later")
	sock := filepath.Join(agentDir, "agent.2")
	env := SocketEnv{SSHAuthSock: sock}
	if got := env.Existing(); slices.Contains(got, sock) || slices.Contains(got, agentDir) {
		t.Fatalf("Existing = %q before the agent's socket exists", got)
	}
	if err := os.Mkdir(agentDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := env.Existing(); !slices.Contains(got, sock) || !slices.Contains(got, agentDir) {
		t.Errorf("Existing = %q, want the agent's socket and its folder once they exist", got)
	}
}

// Commands write inside the session's layer folders; courier itself, which
// runs unconfined, never follows a link there to a place outside.
func TestLayerFoldersNeverFollowLinks(t *testing.T) {
	caches, outside := t.TempDir(), t.TempDir()
	opts := Options{Caches: caches, Session: "s1"}
	if err := Prepare(opts); err != nil {
		t.Fatal(err)
	}
	// A link where a layer folder was, and one a command left inside a
	// layer folder.
	python := filepath.Join(opts.Layer(), "python")
	if err := os.RemoveAll(python); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, python); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(opts.Layer(), "xdg", "planted")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "kept"), []byte("kept"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(outside, 0o700) })
	if err := Prepare(opts); err == nil {
		t.Error("Prepare made the layer's folders through a link")
	}
	if err := RemoveLayer(caches, "s1"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || entries[0].Name() != "kept" {
		t.Errorf("the place the links named changed: %v", entries)
	}
	if info, err := os.Stat(outside); err != nil || info.Mode().Perm() != 0o555 {
		t.Errorf("the place the links named changed mode: %v %v", info.Mode(), err)
	}
	if _, err := os.Lstat(opts.Layer()); !os.IsNotExist(err) {
		t.Errorf("the layer is still there: %v", err)
	}
}
