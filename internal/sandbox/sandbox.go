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
type Options struct {
	// Writable lists the folders the command may change besides its tool
	// caches and temporary folders; the caller passes the workspace here.
	Writable []string `json:"writable,omitempty"`
	// ReadOnly lists paths inside writable folders the command may only
	// read: the workspace's .git (see GitPaths). It needs the mount
	// namespace.
	ReadOnly []string `json:"readOnly,omitempty"`
	// Hide lists folders and files whose content the command must not see:
	// courier's own sessions, inbox and outbox. Folders become empty and
	// files empty.
	Hide []string `json:"hide,omitempty"`
	// Sockets say where the sockets of the person's session are (see
	// SocketEnv.Existing), hidden like Hide. The ones that exist are looked
	// up as each command starts, so that one made while courier runs (an
	// SSH agent or a container engine started during a long watch) is
	// hidden from the next command.
	Sockets SocketEnv `json:"sockets,omitzero"`
	// Home is the person's home folder, whose secret places (SecretPlaces)
	// are hidden like Hide. They are looked up as each command starts, so
	// one made while courier runs (an 'aws configure' in another terminal
	// during a long watch) is hidden from the next command.
	Home string `json:"home,omitempty"`
	// HideHome, when set, is the person's home folder: the command then sees
	// only the Show folders of it, and the writable ones.
	HideHome string `json:"hideHome,omitempty"`
	// Show lists folders kept visible, read-only, inside a hidden home or a
	// private temporary folder: toolchains, PATH entries.
	Show []string `json:"show,omitempty"`
	// Caches is courier's folder for the commands' tool caches and
	// temporary folders (see ToolEnv); empty leaves the tools' own
	// settings alone.
	Caches string `json:"caches,omitempty"`
	// Session names the session whose private temporary folder the command
	// gets under Caches.
	Session string `json:"session,omitempty"`
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

// Probed returns the options with Kernel filled in by Probe, when set.
func (o Options) Probed() Options {
	if o.Probe != nil {
		o.Kernel = o.Probe(o.Session)
		o.Probe = nil
	}
	return o
}

// ToolsDir and TempDir are the folders under Caches that commands may
// write: the shared tool caches, and the session's temporary folder.
func (o Options) ToolsDir() string { return filepath.Join(o.Caches, "tools") }

// TempDir is the session's private temporary folder, "" without Caches.
func (o Options) TempDir() string {
	if o.Caches == "" {
		return ""
	}
	session := o.Session
	if session == "" {
		session = "none"
	}
	return filepath.Join(o.Caches, "tmp", filepath.Base(session))
}

// writable is every folder the command may change.
func (o Options) writable() []string {
	dirs := append([]string(nil), o.Writable...)
	if o.Caches != "" {
		dirs = append(dirs, o.ToolsDir(), o.TempDir())
	}
	return dirs
}

// Prepare creates courier's cache folders the options name, which must
// exist before the launcher can open them.
func Prepare(o Options) error {
	if o.Caches == "" {
		return nil
	}
	for _, d := range append(toolDirs(o), o.TempDir()) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create courier's tool caches: %w", err)
		}
	}
	return nil
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
