//go:build linux && !amd64 && !arm64

package sandbox

// No filter program is written for this architecture: the UNIX socket
// filter is reported missing (see socketFilter).
const (
	filterArch = false
	auditArch  = 0
	sysSocket  = 0
)
