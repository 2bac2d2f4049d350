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
	"path/filepath"
	"slices"
	"syscall"
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

// Options says how to confine a command. With the mount namespace its
// world is built from nothing (see view_linux.go).
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

// request is what the launcher reads on stdin rather than its command
// line, which every process of the namespace can read: how to confine the
// command, and the command's environment.
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

// parseArgs reads the command the launcher runs: "--", then an absolute
// program path and its arguments.
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

// TempDirs are the system's temporary folders, which commands may write
// (private ones with the mount namespace).
func TempDirs() []string {
	return []string{"/tmp", "/var/tmp", "/dev/shm"}
}
