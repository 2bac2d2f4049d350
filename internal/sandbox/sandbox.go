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
	"syscall"
)

// ExecArg is the hidden first argument that makes courier act as the
// sandbox launcher instead of its normal command line.
const ExecArg = "__sandbox-exec"

// ExitFailure is Main's exit code when it cannot run the command, the
// shell's own code for "found but could not be executed".
const ExitFailure = 126

// Launch is how to start a command (see Launcher).
type Launch struct {
	Path string
	Args []string
	Attr *syscall.SysProcAttr
	// Env is the environment to start Path with. The launcher starts with
	// none at all: it is courier's own binary, and a variable the reply
	// chose (LD_PRELOAD, GCONV_PATH, GODEBUG) would act on it before it
	// confines anything. The command's environment travels in Stdin and
	// is set only when the command itself is executed.
	Env []string
	// Stdin carries the launcher's options; nil is /dev/null.
	Stdin io.Reader
	// Confined is false when the command runs as it is (not on Linux).
	Confined bool
}

// Options says how to confine a command.
//
// With the mount namespace the command's world is built from nothing (see
// view_linux.go): the system folders read-only, a private home with
// read-only views of what tools need, private temporary folders, and the
// writable folders below; nothing else of the person's files is there.
type Options struct {
	// Writable lists the folders the command may change besides its cache
	// layers and temporary folders; the caller passes the workspace here.
	Writable []string `json:"writable,omitempty"`
	// ReadOnly lists paths inside writable folders the command may only
	// read: every .git of the workspace. It needs the mount namespace.
	ReadOnly []string `json:"readOnly,omitempty"`
	// Hide lists folders and files the command must not see even where
	// what holds them is shown: courier's own folders of every courier
	// root of the person. Folders look empty, files empty.
	Hide []string `json:"hide,omitempty"`
	// Show lists the person's places the command sees read-only: folders
	// on PATH, toolchains, the configuration files builds read, and the
	// person's read_only setting (see ToolFolders).
	Show []string `json:"show,omitempty"`
	// Home is the person's home folder. The command sees it empty but for
	// Show and its cache layers, unless HomeReadable.
	Home string `json:"home,omitempty"`
	// HomeReadable shows the whole home read-only instead, but for its
	// secret places (SecretPlaces) and the session's sockets, looked up as
	// each command starts, so that one made while courier runs (an 'aws
	// configure' during a long watch) is hidden from the next command.
	HomeReadable bool      `json:"homeReadable,omitempty"`
	Sockets      SocketEnv `json:"sockets,omitzero"`
	// Caches is courier's folder for the sessions' cache layers and
	// temporary folders (see Layer); empty leaves the tools' own settings
	// alone.
	Caches string `json:"caches,omitempty"`
	// Session names the session whose layer the command gets.
	Session string `json:"session,omitempty"`
	// Tools are the person's caches the command sees warm, each under a
	// writable layer of the session's own (see PersonCaches).
	Tools []Cache `json:"tools,omitempty"`
	// Limits bound the command's processes and memory.
	Limits Limits `json:"limits,omitzero"`
	// NoNetwork cuts the network: a network namespace with only loopback,
	// no UNIX sockets, and Landlock's TCP rules.
	NoNetwork bool `json:"noNetwork,omitempty"`
	// Strict refuses to run a command when a layer these options need is
	// missing, instead of running it with the layers there are.
	Strict bool `json:"strict,omitempty"`
	// Kernel is what the kernel allows, from Probe. The zero value means
	// no namespaces and no seccomp filter: Landlock, capabilities and
	// no_new_privs only.
	Kernel Kernel `json:"kernel"`
	// Probe, when set, gives Kernel when a command is about to run, for
	// the Session it runs in (see Probed): probing starts processes, which
	// courier need not pay for when it runs no command.
	Probe func(session string) Kernel `json:"-"`
}

// Limits bound one command: its processes at once and its memory.
type Limits struct {
	Processes int   `json:"processes,omitempty"`
	Memory    int64 `json:"memory,omitempty"`
	// Cgroups are the control groups made for the command (see
	// NewCgroup), which the launcher joins; with none it sets resource
	// limits instead.
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

// Layer is the session's own folder under Caches: its temporary folder
// and the writable layer of each cache. "" without Caches.
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

// TempDir is the session's private temporary folder (TMPDIR), "" without
// Caches.
func (o Options) TempDir() string {
	if o.Caches == "" {
		return ""
	}
	return filepath.Join(o.Layer(), "tmp")
}

// writable is every folder the command may change, as the command sees
// them.
func (o Options) writable() []string {
	dirs := append([]string(nil), o.Writable...)
	if o.Caches != "" {
		dirs = append(dirs, o.TempDir())
		for _, c := range o.caches() {
			dirs = append(dirs, c.view)
		}
	}
	return dirs
}

// The launcher reads its options from stdin, then puts /dev/null there for
// the command: in a PID namespace it stays running, and its command line,
// which every process of the namespace can read, shows only the command.

// maxOptions bounds what the launcher reads as options.
const maxOptions = 16 << 20

// request is what the launcher reads on stdin: how to confine the command,
// and the environment the command (not the launcher) gets.
type request struct {
	Options Options  `json:"options"`
	Env     []string `json:"env"`
}

// encodeRequest is what the launcher reads on stdin.
func encodeRequest(opts Options, env []string) ([]byte, error) {
	data, err := json.Marshal(request{Options: opts, Env: env})
	if err != nil {
		return nil, fmt.Errorf("sandbox options: %w", err)
	}
	return data, nil
}

// readRequest reads the launcher's options and the command's environment
// from r.
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

// TempDirs are the system's temporary folders. Commands may write them;
// with the mount namespace each command gets private, empty ones.
func TempDirs() []string {
	return []string{"/tmp", "/var/tmp", "/dev/shm"}
}
