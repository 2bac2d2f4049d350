package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// With the network cut, a network namespace stops TCP and UDP, but UNIX
// sockets live in the file system: a command could still reach the SSH
// agent, a database or a container engine through one. The kernels most
// people have cannot refuse connect(2) on a pathname socket with Landlock
// (ABI 9), so a seccomp filter refuses creating UNIX sockets at all, and
// io_uring, which could create them too; socketpair(2), which connects
// only the command's own ends, still works.

// x32Bit marks x32 system calls on amd64; no arm64 call number comes near
// it either, so the filter refuses every call at or above it.
const x32Bit = 0x40000000

// socketFilter is the filter program: socket(AF_UNIX, ...) fails with
// EACCES. io_uring_setup fails with ENOSYS, since io_uring can create and
// connect sockets without the socket system call; programs fall back to
// ordinary calls. Calls from another ABI (a 32-bit program, whose
// socketcall(2) the filter could not read) fail with ENOSYS too.
func socketFilter() ([]unix.SockFilter, error) {
	if !filterArch {
		return nil, fmt.Errorf("courier has no UNIX socket filter for %s", runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		// offsets in struct seccomp_data
		nr, arch, arg0 = 0, 4, 16
	)
	return assemble([]insn{
		{code: ld, k: arch},
		{code: jeq, k: auditArch, jf: "nosys"},
		{code: ld, k: nr},
		{code: jge, k: x32Bit, jt: "nosys"},
		{code: jeq, k: unix.SYS_IO_URING_SETUP, jt: "nosys"},
		{code: jeq, k: sysSocket, jf: "allow"},
		{code: ld, k: arg0}, // the domain (low 32 bits)
		{code: jeq, k: unix.AF_UNIX, jf: "allow"},
		{code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		{label: "allow", code: ret, k: unix.SECCOMP_RET_ALLOW},
		{label: "nosys", code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}), nil
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

// refuseUnixSockets installs the filter on every thread of the process;
// no_new_privs must be set on all of them first.
func refuseUnixSockets() error {
	prog, err := socketFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	switch {
	case errno != 0:
		return fmt.Errorf("install the UNIX socket filter: %w", errno)
	case r != 0:
		return fmt.Errorf("install the UNIX socket filter: thread %d could not take it", r)
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
