//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	filterArch = true
	auditArch  = unix.AUDIT_ARCH_AARCH64
	sysSocket  = unix.SYS_SOCKET
)
