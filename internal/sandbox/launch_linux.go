package sandbox

import (
	"bytes"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// selfExe names the inode courier runs from. The kernel resolves it in the
// new process, which is still a copy of courier at that point: replacing or
// renaming courier's file on disk cannot change what runs.
const selfExe = "/proc/self/exe"

// Launcher returns how to start argv (an absolute program path first)
// confined as opts say, with env as its environment.
func Launcher(opts Options, argv, env []string) (Launch, error) {
	data, err := encodeRequest(opts, env)
	if err != nil {
		return Launch{}, err
	}
	return Launch{
		Path:     selfExe,
		Args:     append([]string{"courier", ExecArg, "--"}, argv...),
		Attr:     launchAttr(opts.Kernel.Namespaces, opts.NoNetwork && opts.Kernel.Network),
		Env:      []string{},
		Stdin:    bytes.NewReader(data),
		Confined: true,
	}, nil
}

// launchAttr starts the launcher in its own session and, when the kernel
// allows it, in new user, mount, PID, IPC (the person's shared memory and
// message queues are not in it) and UTS namespaces (and a network one),
// mapping only the person's own user and group, so tools do not think they
// are root. Pdeathsig ends the launcher when courier dies, even by kill -9;
// as the PID namespace's first process its end ends every process in it.
func launchAttr(namespaces, network bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if !namespaces {
		return attr
	}
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if network {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	// Running the launcher drops the capabilities the new user namespace
	// gave it, since its user is not root there; these ambient ones it
	// keeps for its mounts, the loopback and the securebits, and drops
	// before it starts the command. An overlay works in a folder it makes
	// with no permissions at all, which only CAP_DAC_OVERRIDE enters; in
	// the namespace that reaches only the person's own files.
	attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE}
	return attr
}
