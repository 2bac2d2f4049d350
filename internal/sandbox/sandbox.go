// Package sandbox confines a RUN_COMMAND on Linux in every layer the kernel
// allows: user, mount and PID namespaces (and a network namespace when the
// network is cut); a read-only .git, empty secret places and a private
// /tmp in the command's view of the files; Landlock; no capabilities;
// no_new_privs; and, with the network cut, a seccomp filter that refuses
// UNIX sockets. Layers the kernel refuses are reported (Layers), and
// Options.Strict refuses to run without them.
//
// courier does not confine itself. It starts the launcher from
// /proc/self/exe, the inode courier itself runs from, so no command can
// replace it by writing or renaming courier's file on disk. The launcher
// (Main) builds the confinement and starts the shell. In a PID namespace it
// stays as the namespace's first process: it reaps, passes termination
// signals on, and exits with the shell's status, at which the kernel ends
// every process still left in the namespace.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/courier-agent/courier/internal/human"
)

// ExecArg is the hidden first argument that makes courier the launcher.
const ExecArg = "__sandbox-exec"

// ExitFailure is Main's exit code when it cannot run the command, the
// shell's for "found but could not be executed".
const ExitFailure = 126

// Launch is how to start a command (see Launcher).
type Launch struct {
	Path string
	Args []string
	Attr *syscall.SysProcAttr
	// Env is empty for the launcher: a variable the reply chose
	// (LD_PRELOAD, GODEBUG) would act on it before it confines anything.
	// The command's environment travels in Stdin.
	Env      []string
	Stdin    io.Reader // the launcher's options; nil is /dev/null
	Confined bool      // false when the command runs as it is (not on Linux)
}

// Options says how to confine a command (see view_linux.go).
type Options struct {
	// Writable are the folders the command may change besides its cache
	// layers and temporary folders: the workspace.
	Writable []string `json:"writable,omitempty"`
	// ReadOnly are paths inside Writable the command may only read: every
	// .git of the workspace. It needs the mount namespace.
	ReadOnly []string `json:"readOnly,omitempty"`
	// Hide are places shown empty even inside what is shown: courier's
	// own folders.
	Hide []string `json:"hide,omitempty"`
	// Show are the person's places seen read-only (see ToolFolders).
	Show []string `json:"show,omitempty"`
	// Home is seen empty but for Show and the cache layers, or, with
	// HomeReadable, read-only but for its secret places and the session's
	// sockets, looked up as each command starts.
	Home         string    `json:"home,omitempty"`
	HomeReadable bool      `json:"homeReadable,omitempty"`
	Sockets      SocketEnv `json:"sockets,omitzero"`
	// Caches is courier's folder for the sessions' cache layers and
	// temporary folders (see Layer); "" leaves the tools' settings alone.
	Caches  string  `json:"caches,omitempty"`
	Session string  `json:"session,omitempty"` // whose layer the command gets
	Tools   []Cache `json:"tools,omitempty"`   // the person's caches, seen warm
	Limits  Limits  `json:"limits,omitzero"`
	// NoNetwork cuts the network: a network namespace with only loopback,
	// no UNIX sockets, and Landlock's TCP rules.
	NoNetwork bool `json:"noNetwork,omitempty"`
	// Strict refuses to run a command when a layer it needs is missing.
	Strict bool `json:"strict,omitempty"`
	// Kernel is what the kernel allows, from Probe; the zero value means
	// Landlock, capabilities and no_new_privs only.
	Kernel Kernel `json:"kernel"`
	// Probe, when set, gives Kernel for the Session once a command is
	// about to run (see Probed): a run with no command need not probe.
	Probe func(session string) Kernel `json:"-"`
}

// Limits bound one command: its processes at once and its memory.
type Limits struct {
	Processes int   `json:"processes,omitempty"`
	Memory    int64 `json:"memory,omitempty"`
	// Cgroups are the command's control groups (see NewCgroup), which the
	// launcher joins; with none it sets resource limits.
	Cgroups []string `json:"cgroups,omitempty"`
}

// Cgroup is the control group made for one command.
type Cgroup struct{ dirs []string }

// Dirs are the groups the launcher joins.
func (c *Cgroup) Dirs() []string {
	if c == nil {
		return nil
	}
	return c.dirs
}

// Hit says which limit the command ran into, "" for none.
func (c *Cgroup) Hit() string {
	if c == nil {
		return ""
	}
	for _, d := range c.dirs {
		if counter(filepath.Join(d, "pids.events"), "max") > 0 {
			return "processes"
		}
		if counter(filepath.Join(d, "memory.events"), "oom_kill") > 0 || counter(filepath.Join(d, "memory.oom_control"), "oom_kill") > 0 {
			return "memory"
		}
	}
	return ""
}

// Remove removes the groups once the kernel has ended their processes.
func (c *Cgroup) Remove() {
	if c == nil {
		return
	}
	for _, d := range c.dirs {
		for range 1000 {
			if err := os.Remove(d); !errors.Is(err, syscall.EBUSY) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	c.dirs = nil
}

// counter reads "key N" from a control group's events file.
func counter(file, key string) int {
	data, _ := os.ReadFile(file)
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && k == key {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// Probed returns the options with Kernel filled in by Probe, when set.
func (o Options) Probed() Options {
	if o.Probe != nil {
		o.Kernel = o.Probe(o.Session)
		o.Probe = nil
	}
	return o
}

// Layer is the session's own folder under Caches, "" without Caches.
func (o Options) Layer() string {
	if o.Caches == "" {
		return ""
	}
	session := o.Session
	if session == "" {
		session = "none"
	}
	return filepath.Join(o.Caches, "sessions", filepath.Base(session))
}

// writable is every folder the command may change, as it sees them.
func (o Options) writable() []string {
	dirs := slices.Clone(o.Writable)
	for _, c := range o.caches() {
		dirs = append(dirs, c.view)
	}
	return dirs
}

// maxOptions bounds what the launcher reads as options.
const maxOptions = 16 << 20

// request is what the launcher reads on stdin, not on its command line,
// which every process of the namespace can read.
type request struct {
	Options Options  `json:"options"`
	Env     []string `json:"env"`
}

func encodeRequest(opts Options, env []string) ([]byte, error) {
	data, err := json.Marshal(request{Options: opts, Env: env})
	if err != nil {
		return nil, fmt.Errorf("sandbox options: %w", err)
	}
	return data, nil
}

func readRequest(r io.Reader) (request, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxOptions))
	if err != nil {
		return request{}, fmt.Errorf("read the options: %w", err)
	}
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return request{}, fmt.Errorf("read the options: %w", err)
	}
	if req.Env == nil {
		req.Env = []string{}
	}
	return req, nil
}

// parseArgs reads "--", an absolute program path and its arguments.
func parseArgs(args []string) ([]string, error) {
	if len(args) < 1 || args[0] != "--" {
		return nil, errors.New("want -- and the command")
	}
	argv := args[1:]
	if len(argv) == 0 {
		return nil, errors.New("no command after --")
	}
	if !filepath.IsAbs(argv[0]) {
		return nil, fmt.Errorf("command %q is not an absolute path", argv[0])
	}
	return argv, nil
}

// TempDirs are the system's temporary folders, which commands may write.
func TempDirs() []string {
	return []string{"/tmp", "/var/tmp", "/dev/shm"}
}

// Kernel is what the kernel allows, as Probe found; each Why says why not.
type Kernel struct {
	// Unconfined says why no command can be confined (not on Linux):
	// every command then waits for the person's yes.
	Unconfined    string `json:"unconfined,omitempty"`
	Landlock      int    `json:"landlock"` // the ABI version, 0 for none
	LandlockWhy   string `json:"landlockWhy,omitempty"`
	Namespaces    bool   `json:"namespaces"` // user, mount and PID, with every mount
	NamespacesWhy string `json:"namespacesWhy,omitempty"`
	Network       bool   `json:"network"` // a network namespace, loopback up
	NetworkWhy    string `json:"networkWhy,omitempty"`
	Seccomp       bool   `json:"seccomp"`
	SeccompWhy    string `json:"seccompWhy,omitempty"`
	Overlay       bool   `json:"overlay"` // caches seen under a session's layer
	OverlayWhy    string `json:"overlayWhy,omitempty"`
	Cgroup        bool   `json:"cgroup"` // a control group bounds a command
	CgroupWhy     string `json:"cgroupWhy,omitempty"`
}

// Layer is one layer of the confinement as courier sandbox check shows it.
type Layer struct {
	Name   string `json:"name"`
	Needed bool   `json:"needed"` // false for one these settings do not use
	Active bool   `json:"active"`
	// Speed marks a layer that saves time rather than protects, which
	// sandbox = "strict" does not insist on.
	Speed bool `json:"speed,omitempty"`
	// Detail says what the layer does, or why it is missing and what is
	// then not protected.
	Detail string `json:"detail"`
}

// Layers describes each layer of the confinement opts give on this kernel.
func Layers(opts Options) []Layer {
	k := opts.Kernel
	if k.Unconfined != "" {
		return []Layer{{Name: "sandbox", Needed: true, Detail: k.Unconfined +
			": they can read and write whatever you can, use the network and outlive their turn, so each waits for your yes; the environment allow-list and the command policy apply too"}}
	}
	missing := func(why, unprotected string) string { return why + "; without it " + unprotected }
	ns := k.Namespaces
	home := "a private home holding read-only only the tools on PATH, the toolchains and the configuration files builds read"
	if opts.HomeReadable {
		home = "your home read-only but for its secret places, which look empty (home = \"readable\")"
	}
	netOn, ll := !opts.NoNetwork, k.Landlock > 0
	return []Layer{
		{Name: "user namespace", Needed: true, Active: ns, Detail: pick(ns,
			"commands run as your own user in a namespace of their own, which gives them no power over the machine",
			missing(k.NamespacesWhy, "the mount, PID and IPC namespaces are missing too"))},
		{Name: "mount namespace", Needed: true, Active: ns, Detail: pick(ns,
			"commands see a world built for them: the system's folders read-only, "+home+", no courier folder but the workspace, a private /tmp, /dev and /proc; they change only the workspace (every .git in it read-only), the session's cache layers and temporary folders, and nothing else, not even modes or times",
			missing(k.NamespacesWhy, "commands see all your files, can change the modes and times of files outside the workspace, write .git, and reach your session's sockets and terminals"))},
		{Name: "pid namespace", Needed: true, Active: ns, Detail: pick(ns,
			"commands see only their own processes, and every process they start ends with them",
			missing(k.NamespacesWhy, "commands can read the environment of your processes in /proc, and a process that leaves its session (setsid) can outlive the command"))},
		{Name: "ipc namespace", Needed: true, Active: ns, Detail: pick(ns,
			"commands cannot see or change your shared memory, semaphores and message queues",
			missing(k.NamespacesWhy, "commands can read, change and remove your System V shared memory"))},
		{Name: "network namespace", Needed: !netOn, Active: !netOn && ns && k.Network, Detail: netDetail(opts)},
		{Name: "unix socket filter", Needed: !netOn, Active: !netOn && k.Seccomp, Detail: socketDetail(opts)},
		{Name: "seccomp filter", Needed: true, Active: k.Seccomp, Detail: pick(k.Seccomp,
			"commands get a new session keyring and cannot call keyctl, add_key or request_key, mount anything, load BPF programs or kernel modules, open perf events or userfaultfd, or use io_uring",
			missing(k.SeccompWhy, "commands can read and change the keys of your session keyring"))},
		{Name: "warm caches", Needed: opts.Caches != "", Speed: true, Active: ns && k.Overlay, Detail: pick(ns && k.Overlay,
			"commands see your Go, pip, npm and cargo caches read-only, under a writable layer of the session's own (overlayfs)",
			missing(k.OverlayWhy, "each session's caches start empty, so its first builds take longer"))},
		{Name: "landlock", Needed: true, Active: ll, Detail: pick(ll,
			fmt.Sprintf("commands write only in the workspace, the session's cache layers and the temporary folders (Landlock ABI %d)", k.Landlock),
			missing(k.LandlockWhy, "commands can write wherever you can"))},
		{Name: "landlock scopes", Needed: true, Active: k.Landlock >= scopeABI, Detail: pick(k.Landlock >= scopeABI,
			"commands cannot signal processes outside their sandbox or connect to abstract UNIX sockets outside it (X11, D-Bus)",
			missing(fmt.Sprintf("needs Landlock ABI %d (Linux 6.12), the kernel has %d", scopeABI, k.Landlock),
				"commands can connect to abstract UNIX sockets of your session (X11, D-Bus) while the network is on"))},
		{Name: "limits", Needed: opts.Limits.Processes > 0 || opts.Limits.Memory > 0, Active: k.Cgroup || os.Getuid() != 0, Detail: limitsDetail(opts)},
		{Name: "capabilities", Needed: true, Active: true, Detail: capsDetail(ns)},
		{Name: "no_new_privs", Needed: true, Active: true, Detail: "setuid and file-capability programs give commands no privileges"},
		{Name: "environment allow-list", Needed: true, Active: true, Detail: "commands get only the allow-listed variables, the tool variables and keep_env (courier config lists them)"},
	}
}

// limitsDetail says how the command's processes and memory are bounded.
func limitsDetail(opts Options) string {
	l := opts.Limits
	mem := "no limit"
	if l.Memory > 0 {
		mem = human.ExactBytes(l.Memory)
	}
	what := fmt.Sprintf("at most %d processes and %s of memory per command", l.Processes, mem)
	switch {
	case opts.Kernel.Cgroup:
		return what + " (a control group)"
	case os.Getuid() == 0:
		return opts.Kernel.CgroupWhy + "; without it a command of root's is bound only by each process's data size, and may start any number of processes"
	}
	return what + " (resource limits: the processes per command, the data size per process; " + opts.Kernel.CgroupWhy + ")"
}

// scopeABI is the Landlock ABI that scopes signals and abstract sockets.
const scopeABI = 6

func pick(ok bool, active, missing string) string {
	if ok {
		return active
	}
	return missing
}

func netDetail(opts Options) string {
	k := opts.Kernel
	switch {
	case !opts.NoNetwork:
		return "not used: network = true"
	case !k.Namespaces:
		return fmt.Sprintf("needs the user namespace (%s); %s", k.NamespacesWhy, fallbackNet(k))
	case !k.Network:
		return fmt.Sprintf("%s; %s", k.NetworkWhy, fallbackNet(k))
	}
	return "commands have only a private loopback: no TCP, UDP or other traffic leaves"
}

// fallbackNet says what cuts the network without a network namespace.
func fallbackNet(k Kernel) string {
	if k.Landlock >= NetABI {
		return "Landlock cuts TCP only; UDP still leaves"
	}
	return "nothing can cut TCP or UDP on this kernel"
}

func socketDetail(opts Options) string {
	switch {
	case !opts.NoNetwork:
		return "not used: network = true (your session's sockets are hidden by the mount namespace)"
	case !opts.Kernel.Seccomp:
		return opts.Kernel.SeccompWhy + "; without it commands can connect to UNIX sockets they can reach"
	}
	return "commands cannot open UNIX sockets (socketpair still works)"
}

func capsDetail(namespaced bool) string {
	switch {
	case namespaced:
		return "commands hold no capability: bounding, ambient, effective, permitted and inheritable sets emptied"
	case os.Getuid() == 0:
		return "commands run as root without any capability: every set emptied and securebits locked"
	}
	return "commands hold no capability (courier runs as an ordinary user)"
}

// Missing returns the layers opts need that are not active.
func Missing(opts Options) []Layer {
	var out []Layer
	for _, l := range Layers(opts) {
		if l.Needed && !l.Active {
			out = append(out, l)
		}
	}
	return out
}

// Check reports whether a command may run as opts say: Strict needs every
// layer, else only a cut network is insisted on.
func Check(opts Options) error {
	if k := opts.Kernel.Unconfined; k != "" {
		if opts.Strict || opts.NoNetwork {
			return fmt.Errorf("%s; the sandbox settings forbid running them unconfined", k)
		}
		return nil
	}
	if opts.Strict {
		var names []string
		for _, l := range Missing(opts) {
			if !l.Speed {
				names = append(names, l.Name)
			}
		}
		if len(names) > 0 {
			return fmt.Errorf("sandbox = \"strict\" and this kernel does not allow %s (courier sandbox check says why)", strings.Join(names, ", "))
		}
	}
	k := opts.Kernel
	if opts.NoNetwork && !(k.Namespaces && k.Network) && k.Landlock < NetABI {
		return errors.New("network = false, but this kernel allows neither a network namespace nor Landlock's TCP rules (Linux 6.7), so the network cannot be cut")
	}
	return nil
}

// NetABI is the first Landlock ABI that can restrict TCP (Linux 6.7).
const NetABI = 4

// Available reports the kernel's Landlock ABI version, or 0 and why.
func Available() (int, error) {
	abi, err := llsyscall.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return 0, errors.New("the kernel has no landlock support (it needs Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK)")
	case errors.Is(err, syscall.EOPNOTSUPP):
		return 0, errors.New("landlock is disabled at boot (add landlock to the kernel's lsm= parameter)")
	case err != nil:
		return 0, fmt.Errorf("query landlock version: %w", err)
	case abi < 1:
		return 0, fmt.Errorf("kernel reports landlock version %d", abi)
	}
	return abi, nil
}
