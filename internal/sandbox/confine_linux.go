package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// Credentials belong to each thread in Linux, and the Go runtime runs the
// launcher on several; psx makes every change on all of them, so whichever
// thread starts the shell hands it the same restrictions.

// confine restricts the launcher, and so everything it starts:
// no_new_privs, Landlock, the seccomp filter, and no capabilities. A layer opts.Kernel reports as available that
// cannot be applied fails the command rather than letting it run without.
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

// Securebits (linux/securebits.h): uid 0 gets no capabilities from
// executing a program, a uid change does not touch them, and neither these
// bits nor ambient capabilities can change again.
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

// dropCapabilities empties the bounding, ambient, effective, permitted and
// inheritable sets of every thread, locking the securebits first where the
// launcher may (it holds CAP_SETPCAP as root, or in its user namespace).
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

// capabilities reads the calling thread's capability sets.
func capabilities() ([2]unix.CapUserData, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return data, fmt.Errorf("read the capabilities: %w", err)
	}
	return data, nil
}

// allThreadsPrctl calls prctl(option, arg, 0, 0, 0) on every thread; the
// unused arguments must be zero for several options.
func allThreadsPrctl(option int, arg uintptr) error {
	if _, _, errno := psx.Syscall6(unix.SYS_PRCTL, uintptr(option), arg, 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
