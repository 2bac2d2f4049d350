package sandbox

import (
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// devices are the device files ordinary commands write to or control.
// The ioctl right (Landlock ABI 5) keeps terminal operations (tcgetattr,
// window size) working on them.
var devices = []string{
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx",
}

// readWrite is what commands may do in their writable folders: everything
// but making block and character devices, which would give them the
// disks and other hardware behind a device node.
const readWrite = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
	ll.AccessFSReadDir | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
	ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeSym | ll.AccessFSTruncate)

// landlockConfig says which operations Landlock handles, i.e. denies unless
// a rule allows them: every filesystem right go-landlock knows, TCP/UDP when
// the network is cut without a network namespace, and always the IPC scopes, so the command can neither
// signal processes outside its sandbox (courier, the person's editor) nor
// reach services on abstract UNIX sockets. BestEffort later narrows this to
// what the kernel supports.
func landlockConfig(opts Options) landlock.Config {
	cfg := landlock.Config{
		HandledAccessFS: landlock.V11.HandledAccessFS,
		Scoped:          landlock.V11.Scoped,
	}
	// A network namespace cuts more than Landlock can, and leaves the
	// command its own loopback, which Landlock's rules would refuse too.
	if opts.NoNetwork && !(opts.Kernel.Namespaces && opts.Kernel.Network) {
		cfg.HandledAccessNet = landlock.V11.HandledAccessNet
	}
	return cfg
}

// rules grants reading and executing everywhere, everything but making
// devices in the writable folders (the workspace, courier's tool caches,
// the session's temporary folder) and in the system's temporary folders
// (private to the command when it has a mount namespace), and use of the
// common devices. With no network rule, a handled network (NoNetwork)
// denies all TCP bind/connect.
func rules(opts Options, abi int) []landlock.Rule {
	writable := landlock.PathAccess(readWrite, opts.writable()...).WithResolveUnix()
	temp := landlock.PathAccess(readWrite, TempDirs()...).WithResolveUnix().IgnoreIfMissing()
	// Moving or linking a file between folders needs "refer" (ABI 2). On an
	// ABI 1 kernel asking for it would make BestEffort drop Landlock
	// entirely, while ABI 1 always forbids such moves anyway.
	if abi >= 2 {
		writable = writable.WithRefer()
		temp = temp.WithRefer()
	}
	return []landlock.Rule{
		landlock.RODirs("/"),
		writable,
		temp,
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.PathAccess(readWrite, "/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	}
}
