package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// probeArg, after ExecArg, makes the launcher try the layers.
const probeArg = "probe"

// Probe finds what the running kernel allows: it starts the launcher in
// the namespaces commands get, where it tries the mounts, the loopback, the
// seccomp filter, and an overlay in caches, where the sessions' cache
// layers live ("" tries none). It takes a few milliseconds.
func Probe(caches string) Kernel {
	var k Kernel
	abi, err := Available()
	k.Landlock = abi
	if err != nil {
		k.LandlockWhy = err.Error()
	}
	if c, err := NewCgroup(Limits{Processes: 1}); err != nil {
		k.CgroupWhy = err.Error()
	} else {
		c.Remove()
		k.Cgroup = true
	}
	var overlayDir string
	if caches != "" {
		if err := os.MkdirAll(caches, 0o700); err == nil {
			overlayDir, _ = os.MkdirTemp(caches, ".probe-")
		}
		if overlayDir != "" {
			defer func() {
				if root, err := os.OpenRoot(caches); err == nil {
					_ = removeTree(root, filepath.Base(overlayDir))
					root.Close()
				}
			}()
		}
	}
	r, err := runProbe(true, true, overlayDir)
	if err != nil {
		netErr := err
		if r, err = runProbe(true, false, overlayDir); err == nil {
			r.NetworkWhy = "the kernel refuses a network namespace: " + netErr.Error()
		}
	}
	if err != nil {
		k.NamespacesWhy = explainUserNS(err)
		k.NetworkWhy = "needs the user namespace"
	}
	k.Namespaces, k.NamespacesWhy = r.Namespaces, cmp.Or(r.NamespacesWhy, k.NamespacesWhy)
	k.Network, k.NetworkWhy = r.Network, cmp.Or(r.NetworkWhy, k.NetworkWhy)
	k.Overlay, k.OverlayWhy = r.Overlay, r.OverlayWhy
	switch {
	case !r.Namespaces:
		k.OverlayWhy = "needs the mount namespace"
	case overlayDir == "":
		k.OverlayWhy = "no folder for the cache layers"
	}
	if !r.Namespaces {
		// The seccomp filter is tried outside them then.
		r, err = runProbe(false, false, "")
		if err != nil {
			k.SeccompWhy = err.Error()
			return k
		}
	}
	k.Seccomp, k.SeccompWhy = r.Seccomp, r.SeccompWhy
	return k
}

// runProbe runs the launcher's probe in the namespaces asked for; an error
// means the launcher could not run there at all.
func runProbe(namespaces, network bool, overlayDir string) (Kernel, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := []string{"courier", ExecArg, probeArg}
	if namespaces {
		args = append(args, "namespaces")
	}
	if network {
		args = append(args, "network")
	}
	if overlayDir != "" {
		args = append(args, "overlay="+overlayDir)
	}
	cmd := exec.CommandContext(ctx, selfExe)
	cmd.Args = args
	cmd.Env = []string{}
	cmd.Dir = "/" // courier's own folder may be the workspace
	cmd.SysProcAttr = launchAttr(namespaces, network)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return Kernel{}, fmt.Errorf("%w: %s", err, msg)
		}
		return Kernel{}, err
	}
	var k Kernel
	if err := json.Unmarshal(stdout.Bytes(), &k); err != nil {
		return Kernel{}, fmt.Errorf("read the probe's findings: %w", err)
	}
	return k, nil
}

// explainUserNS names the setting that forbids a user namespace, if any.
func explainUserNS(err error) string {
	sysctl := func(name string) string {
		data, _ := os.ReadFile(filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/")))
		return strings.TrimSpace(string(data))
	}
	switch {
	case sysctl("user.max_user_namespaces") == "0":
		return "the kernel allows no user namespaces (user.max_user_namespaces = 0)"
	case sysctl("kernel.unprivileged_userns_clone") == "0" && os.Getuid() != 0:
		return "the kernel refuses user namespaces to ordinary users (kernel.unprivileged_userns_clone = 0)"
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS):
		return "the limit of user namespaces is reached (user.max_user_namespaces): " + err.Error()
	case errors.Is(err, syscall.EINVAL):
		return "the kernel has no user namespaces (CONFIG_USER_NS): " + err.Error()
	}
	return "the kernel refuses a user namespace: " + err.Error()
}

// explainDenied explains a mount refused inside the user namespace.
func explainDenied(err error) string {
	data, _ := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
	if strings.TrimSpace(string(data)) == "1" && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)) {
		return "AppArmor denies capabilities in unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1): " + err.Error()
	}
	return "the user namespace cannot make the mounts commands need: " + err.Error()
}

// probeChild is the launcher's side of Probe: it tries each layer and
// writes the findings as JSON.
func probeChild(args []string, stdout io.Writer) int {
	var k Kernel
	try := func(err error, ok *bool, why *string) {
		if *ok = err == nil; err != nil {
			*why = err.Error()
		}
	}
	if slices.Contains(args, "namespaces") {
		switch {
		case os.Getpid() != 1:
			k.NamespacesWhy = "the launcher did not start in a new PID namespace"
		default:
			for _, a := range args {
				if dir, ok := strings.CutPrefix(a, "overlay="); ok {
					try(probeOverlay(dir), &k.Overlay, &k.OverlayWhy)
				}
			}
			if err := probeMounts(); err != nil {
				k.NamespacesWhy = explainDenied(err)
			} else {
				k.Namespaces = true
			}
		}
		if slices.Contains(args, "network") {
			try(loopbackUp(), &k.Network, &k.NetworkWhy)
		}
	}
	// psx finds the threads in /proc: in a new PID namespace only once
	// /proc is its own.
	if namespaced := slices.Contains(args, "namespaces"); !namespaced || k.Namespaces {
		try(probeSeccomp(), &k.Seccomp, &k.SeccompWhy)
	}
	if err := json.NewEncoder(stdout).Encode(k); err != nil {
		return ExitFailure
	}
	return 0
}

// probeMounts builds a command's world with a writable folder and a
// read-only one inside it, and checks both.
func probeMounts() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", 0, "mode=0755"); err != nil {
		return fmt.Errorf("mount a tmpfs: %w", err)
	}
	ws := "/tmp/ws"
	if err := os.MkdirAll(filepath.Join(ws, "ro"), 0o755); err != nil {
		return err
	}
	if err := buildWorld(Options{Writable: []string{ws}, ReadOnly: []string{filepath.Join(ws, "ro")}}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "f"), nil, 0o644); err != nil {
		return fmt.Errorf("the writable folder refused a write: %w", err)
	}
	for _, p := range []string{filepath.Join(ws, "ro", "f"), "/etc/courier-probe"} {
		if err := os.WriteFile(p, nil, 0o644); !errors.Is(err, unix.EROFS) {
			return fmt.Errorf("a read-only place took a write (%v)", err)
		}
	}
	return nil
}

// probeOverlay mounts an overlay in dir and checks that a write lands in
// the upper folder.
func probeOverlay(dir string) error {
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	data := fmt.Sprintf("lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work,userxattr,volatile", dir, dir, dir)
	if err := unix.Mount("overlay", filepath.Join(dir, "merged"), "overlay", unix.MS_NOSUID|unix.MS_NODEV, data); err != nil {
		return fmt.Errorf("mount an overlay: %w", err)
	}
	defer unix.Unmount(filepath.Join(dir, "merged"), unix.MNT_DETACH)
	if err := os.WriteFile(filepath.Join(dir, "merged", "f"), nil, 0o600); err != nil {
		return fmt.Errorf("write through an overlay: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "upper", "f")); err != nil {
		return fmt.Errorf("an overlay's write is not in its upper folder: %w", err)
	}
	return nil
}

// probeSeccomp installs the filter on the probe and checks that it
// refuses a keyring call and a UNIX socket.
func probeSeccomp() error {
	if err := allThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := installFilter(true); err != nil {
		return err
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0, 0); !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("the filter let a keyring call through (%v)", err)
	}
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
