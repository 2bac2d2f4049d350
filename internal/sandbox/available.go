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
