package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Every command runs under a seccomp filter that refuses the system calls
// no build needs and an attacker would: keyrings (the person's keys live
// there; the launcher gives the command a new session keyring, and these
// calls could still reach the user's), every mount call, BPF, performance
// events, userfaultfd, kernel modules, kexec, reboot, swap, process
// accounting and file handles, which name a file past every mount. io_uring
// is refused too: its operations are no system calls, so no filter sees
// them.
//
// With the network cut, a network namespace stops TCP and UDP, but UNIX
// sockets live in the file system: a command could still reach the SSH
// agent, a database or a container engine through one. The kernels most
// people have cannot refuse connect(2) on a pathname socket with Landlock
// (ABI 9), so the filter then refuses creating UNIX sockets at all;
// socketpair(2), which connects only the command's own ends, still works.

// x32Bit marks x32 system calls on amd64; no arm64 call number comes near
// it either, so the filter refuses every call at or above it.
const x32Bit = 0x40000000

// refused are the calls every command is refused, with EPERM.
var refused = []uint32{
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_OPEN_BY_HANDLE_AT,
}

// filter is the filter program. Calls from another ABI (a 32-bit program,
// whose socketcall(2) the filter could not read) fail with ENOSYS, as
// io_uring's do, so programs fall back to ordinary calls.
func filter(noNetwork bool) ([]unix.SockFilter, error) {
	if !filterArch {
		return nil, fmt.Errorf("courier has no seccomp filter for %s", runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		// offsets in struct seccomp_data
		nr, arch, arg0 = 0, 4, 16
	)
	prog := []insn{
		{code: ld, k: arch},
		{code: jeq, k: auditArch, jf: "nosys"},
		{code: ld, k: nr},
		{code: jge, k: x32Bit, jt: "nosys"},
		{code: jeq, k: unix.SYS_IO_URING_SETUP, jt: "nosys"},
		{code: jeq, k: unix.SYS_IO_URING_ENTER, jt: "nosys"},
		{code: jeq, k: unix.SYS_IO_URING_REGISTER, jt: "nosys"},
	}
	for _, call := range refused {
		prog = append(prog, insn{code: jeq, k: call, jt: "eperm"})
	}
	if noNetwork {
		prog = append(prog,
			insn{code: jeq, k: sysSocket, jf: "allow"},
			insn{code: ld, k: arg0}, // the domain (low 32 bits)
			insn{code: jeq, k: unix.AF_UNIX, jf: "allow"},
			insn{code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		)
	}
	return assemble(append(prog,
		insn{label: "allow", code: ret, k: unix.SECCOMP_RET_ALLOW},
		insn{label: "eperm", code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		insn{label: "nosys", code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	)), nil
}

// insn is a BPF instruction whose jumps name the label they go to; an
// empty name goes on to the next instruction.
type insn struct {
	label  string
	code   uint16
	k      uint32
	jt, jf string
}

// assemble turns the labels into the forward offsets BPF jumps take.
func assemble(prog []insn) []unix.SockFilter {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	offset := func(i int, label string) uint8 {
		if label == "" {
			return 0
		}
		return uint8(at[label] - i - 1)
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		out[i] = unix.SockFilter{Code: in.code, K: in.k, Jt: offset(i, in.jt), Jf: offset(i, in.jf)}
	}
	return out
}

// installFilter installs the filter on every thread of the process;
// no_new_privs must be set on all of them first.
func installFilter(noNetwork bool) error {
	prog, err := filter(noNetwork)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	switch {
	case errno != 0:
		return fmt.Errorf("install the seccomp filter: %w", errno)
	case r != 0:
		return fmt.Errorf("install the seccomp filter: thread %d could not take it", r)
	}
	return nil
}

// checkUnixSocketsRefused verifies the filter in force.
func checkUnixSocketsRefused() error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fd)
		return errors.New("a UNIX socket could still be created")
	}
	if !errors.Is(err, unix.EACCES) {
		return fmt.Errorf("creating a UNIX socket failed with %v instead of the filter's EACCES", err)
	}
	return nil
}
