package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// Credentials are per thread, and Go runs the launcher on several: psx
// makes each change on all of them, whichever then starts the shell.

// confine applies no_new_privs, Landlock, the seccomp filter and drops the
// capabilities; a layer opts.Kernel has that fails fails the command.
func confine(opts Options) error {
	if err := allThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	abi, err := Available()
	switch {
	case abi > 0:
		if err := landlockConfig(opts).BestEffort().Restrict(rules(opts, abi)...); err != nil {
			return fmt.Errorf("apply landlock rules: %w", err)
		}
	case opts.Kernel.Landlock > 0:
		return fmt.Errorf("landlock is gone: %w", err)
	}
	if opts.Kernel.Seccomp {
		if err := installFilter(opts.NoNetwork); err != nil {
			return err
		}
	}
	return dropCapabilities()
}

// Securebits (linux/securebits.h): uid 0 gets no capabilities from exec,
// a uid change keeps none, and neither these nor ambient ones can change.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
	secbitsLocked                 = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// dropCapabilities empties every capability set of every thread, locking
// the securebits first where it holds CAP_SETPCAP.
func dropCapabilities() error {
	caps, err := capabilities()
	if err != nil {
		return err
	}
	if caps[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		if err := allThreadsPrctl(unix.PR_SET_SECUREBITS, secbitsLocked); err != nil {
			return fmt.Errorf("lock the securebits: %w", err)
		}
		for c := uintptr(0); c < 64; c++ {
			err := allThreadsPrctl(unix.PR_CAPBSET_DROP, c)
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability this kernel knows
			}
			if err != nil {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
	}
	// EINVAL: a kernel before 4.3 has no ambient set to clear.
	if err := allThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	_, _, errno := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&none)
	if errno != 0 {
		return fmt.Errorf("drop the capabilities: %w", errno)
	}
	caps, err = capabilities()
	if err != nil {
		return err
	}
	for _, c := range caps {
		if c.Effective|c.Permitted|c.Inheritable != 0 {
			return errors.New("capabilities are still held after dropping them")
		}
	}
	return nil
}

func capabilities() ([2]unix.CapUserData, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return data, fmt.Errorf("read the capabilities: %w", err)
	}
	return data, nil
}

// allThreadsPrctl calls prctl(option, arg, 0, 0, 0) on every thread.
func allThreadsPrctl(option int, arg uintptr) error {
	if _, _, errno := psx.Syscall6(unix.SYS_PRCTL, uintptr(option), arg, 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// devices are the device files commands write to or control (ioctl).
var devices = []string{
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx",
}

// readWrite is what commands may do in writable folders: all but making
// devices, which would give them the hardware behind them.
const readWrite = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
	ll.AccessFSReadDir | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
	ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeSym | ll.AccessFSTruncate)

// landlockConfig says what Landlock denies unless a rule allows it: every
// file right, TCP when the network is cut without a network namespace,
// and the IPC scopes (signals out of the sandbox, abstract UNIX sockets).
// BestEffort narrows this to what the kernel supports.
func landlockConfig(opts Options) landlock.Config {
	cfg := landlock.Config{
		HandledAccessFS: landlock.V11.HandledAccessFS,
		Scoped:          landlock.V11.Scoped,
	}
	// A network namespace cuts more, and leaves the command its loopback.
	if opts.NoNetwork && !(opts.Kernel.Namespaces && opts.Kernel.Network) {
		cfg.HandledAccessNet = landlock.V11.HandledAccessNet
	}
	return cfg
}

// rules grants reading everywhere, readWrite in the writable and temporary
// folders, the common devices, and no network rule: handled, TCP is denied.
func rules(opts Options, abi int) []landlock.Rule {
	writable := landlock.PathAccess(readWrite, opts.writable()...).WithResolveUnix()
	temp := landlock.PathAccess(readWrite, TempDirs()...).WithResolveUnix().IgnoreIfMissing()
	// Moves between folders need "refer" (ABI 2); on ABI 1, which forbids
	// them anyway, asking would make BestEffort drop Landlock entirely.
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

// installFilter installs the filter on every thread (no_new_privs set).
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
