package policy

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

var harmlessDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true,
	"/dev/random": true, "/dev/urandom": true, "/dev/tty": true,
	"/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true,
}

var writeOps = map[syntax.RedirOperator]bool{
	syntax.RdrOut: true, syntax.AppOut: true, syntax.RdrClob: true, syntax.AppClob: true,
	syntax.RdrAll: true, syntax.RdrAllClob: true, syntax.AppAll: true, syntax.AppAllClob: true,
	syntax.RdrInOut: true, syntax.DplOut: true,
}

// normalize cleans a path for the device checks: a path climbing with
// "../" may reach /, so what follows is judged as absolute, and
// /proc/PID/root is another name of /.
func normalize(p string) string {
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		for c == ".." || strings.HasPrefix(c, "../") {
			c = strings.TrimPrefix(strings.TrimPrefix(c, ".."), "/")
		}
		c = "/" + c
	}
	if rest, ok := strings.CutPrefix(c, "/proc/"); ok {
		if parts := strings.SplitN(rest, "/", 3); len(parts) == 3 && parts[1] == "root" {
			c = "/" + parts[2]
		}
	}
	return c
}

func isDevice(p string) bool {
	c := normalize(p)
	if !strings.HasPrefix(c, "/dev/") || harmlessDevices[c] {
		return false
	}
	return !strings.HasPrefix(c, "/dev/fd/") && !strings.HasPrefix(c, "/dev/shm/")
}

// isNetworkPath reports whether p opens a connection in a bash redirection.
func isNetworkPath(p string) bool {
	c := normalize(p)
	return strings.HasPrefix(c, "/dev/tcp/") || strings.HasPrefix(c, "/dev/udp/")
}

// isKernelFile reports whether p is under /proc or /sys, where a write
// changes the running system; a process's descriptors are not.
func isKernelFile(p string) bool {
	c := normalize(p)
	if strings.HasPrefix(c, "/sys/") {
		return true
	}
	rest, ok := strings.CutPrefix(c, "/proc/")
	if !ok {
		return false
	}
	parts := strings.SplitN(rest, "/", 3)
	return len(parts) < 2 || parts[1] != "fd"
}

// redirect checks where a redirection writes or reads; computed targets
// are not judged.
func (a *analyzer) redirect(s *syntax.Stmt, r *syntax.Redirect) {
	if r.Word == nil || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
		return
	}
	w := a.word(r.Word)
	dup := r.Op == syntax.DplOut && !w.computed() && (w.value == "-" || strings.Trim(w.value, "0123456789") == "")
	if writeOps[r.Op] && !dup && w.value != "/dev/null" {
		a.around(a.text(r))
	}
	if w.computed() {
		return
	}
	p := w.value
	switch {
	case dup:
		// >&2 duplicates a descriptor; it opens no file.
	case isNetworkPath(p):
		a.finding(checkDevice, a.text(s), "opens a network connection through "+p)
	case writeOps[r.Op] && (isDevice(p) || isKernelFile(p)):
		a.finding(checkDeviceWrite, a.text(s), "writes to "+p)
	case isDevice(p):
		a.finding(checkDevice, a.text(s), "uses the device "+p)
	}
}

// deviceArgs checks a program's literal arguments for devices: dd's of=
// and tee's files are written, others only used.
func (a *analyzer) deviceArgs(inv Invocation, words []word) {
	for _, w := range words[1:] {
		if w.computed() {
			continue
		}
		p := w.value
		key, val, hasValue := strings.Cut(p, "=")
		if hasValue {
			p = val
		}
		write := (inv.base == "dd" && hasValue && key == "of") ||
			(inv.base == "tee" && !hasValue && !strings.HasPrefix(p, "-"))
		switch {
		case write && (isDevice(p) || isKernelFile(p)):
			a.finding(checkDeviceWrite, inv.source(), "writes to "+p)
		case isDevice(p):
			a.finding(checkDevice, inv.source(), "uses the device "+p)
		}
	}
}
