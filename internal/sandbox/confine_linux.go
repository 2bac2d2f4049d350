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

// confine restricts the launcher and all it starts: no_new_privs,
// Landlock, the seccomp filter, no capabilities. A layer opts.Kernel has
// that cannot be applied fails the command.
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

// devices are the device files commands write to or control (ioctl, ABI
// 5, for terminal operations).
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

// rules grants reading and executing everywhere, readWrite in the
// writable and temporary folders, and use of the common devices; no
// network rule, so a handled network denies all TCP.
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
