//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	filterArch = true
	auditArch  = unix.AUDIT_ARCH_X86_64
	sysSocket  = unix.SYS_SOCKET
)
