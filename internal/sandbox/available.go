package sandbox

import (
	"errors"
	"fmt"
	"syscall"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// NetABI is the first Landlock ABI that can restrict TCP (Linux 6.7).
const NetABI = 4

// Available reports the Landlock ABI version the running kernel supports,
// or 0 and the reason when it supports none.
func Available() (int, error) {
	abi, err := llsyscall.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return 0, errors.New("the kernel has no landlock support (it needs Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK)")
	case errors.Is(err, syscall.EOPNOTSUPP):
		return 0, errors.New("landlock is disabled at boot (add landlock to the kernel's lsm= parameter)")
	case err != nil:
		return 0, fmt.Errorf("query landlock version: %w", err)
	case abi < 1:
		return 0, fmt.Errorf("kernel reports landlock version %d", abi)
	}
	return abi, nil
}

// Check reports whether this kernel can confine a command as opts ask. It
// returns the Landlock ABI version to use, 0 meaning "run unconfined",
// which it allows only when opts ask for neither Strict nor NoNetwork: a
// person who asked for those must not get a command that silently runs
// without them.
func Check(opts Options) (int, error) {
	abi, err := Available()
	switch {
	case abi == 0 && (opts.Strict || opts.NoNetwork):
		return 0, fmt.Errorf("landlock is not available on this kernel (%w); the sandbox settings forbid running the command unconfined", err)
	case abi == 0:
		return 0, nil
	case opts.NoNetwork && abi < NetABI:
		return 0, fmt.Errorf("cutting the network needs landlock ABI %d (Linux 6.7 or newer) but this kernel has ABI %d", NetABI, abi)
	}
	return abi, nil
}
