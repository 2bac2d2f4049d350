package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Every command runs under a seccomp filter that refuses the calls no
// build needs and an attacker would: keyrings (which could still reach the
// user's keyring), mounts, BPF, perf events, userfaultfd, modules, kexec,
// reboot, swap, accounting, and file handles, which name a file past every
// mount. io_uring too: its operations are no system calls a filter sees.
//
// With the network cut, UNIX sockets still live in the file system (the
// SSH agent, a container engine), and most kernels' Landlock cannot refuse
// connecting to one (ABI 9): the filter then refuses creating UNIX sockets
// at all; socketpair(2) still works.

// x32Bit marks x32 calls on amd64; no arm64 call comes near it either.
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

// filter is the filter program. Calls of another ABI (a 32-bit program's
// socketcall(2), unreadable here) fail with ENOSYS, as io_uring's do, so
// programs fall back to ordinary calls.
func filter(noNetwork bool) ([]unix.SockFilter, error) {
	auditArch := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if auditArch == 0 {
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
			insn{code: jeq, k: unix.SYS_SOCKET, jf: "allow"},
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

// insn is a BPF instruction whose jumps name labels ("": the next one).
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

// installFilter installs the filter on every thread, each with
// no_new_privs already.
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
