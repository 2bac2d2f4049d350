package sandbox

import (
	"bytes"
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

// probeArg, after ExecArg, makes the launcher try the layers instead of
// running a command.
const probeArg = "probe"

// Probe finds what the running kernel allows: it starts the launcher in new
// user, mount, PID and network namespaces, as commands will be, and the
// launcher tries there the mounts, the loopback and the socket filter a
// command needs. It takes a few milliseconds; courier probes once a run.
func Probe() Kernel {
	var k Kernel
	abi, err := Available()
	k.Landlock = abi
	if err != nil {
		k.LandlockWhy = err.Error()
	}
	r, err := runProbe(true, true)
	if err != nil {
		netErr := err
		if r, err = runProbe(true, false); err == nil {
			r.NetworkWhy = "the kernel refuses a network namespace: " + netErr.Error()
		}
	}
	if err != nil {
		k.NamespacesWhy = explainUserNS(err)
		k.NetworkWhy = "needs the user namespace"
	}
	k.Namespaces, k.NamespacesWhy = r.Namespaces, first(r.NamespacesWhy, k.NamespacesWhy)
	k.Network, k.NetworkWhy = r.Network, first(r.NetworkWhy, k.NetworkWhy)
	if !r.Namespaces {
		// The socket filter is tried outside the namespaces then.
		r, err = runProbe(false, false)
		if err != nil {
			k.SeccompWhy = err.Error()
			return k
		}
	}
	k.Seccomp, k.SeccompWhy = r.Seccomp, r.SeccompWhy
	return k
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// runProbe runs the launcher's probe in the namespaces asked for and reads
// its findings. An error means the launcher could not run there at all.
func runProbe(namespaces, network bool) (Kernel, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := []string{"courier", ExecArg, probeArg}
	if namespaces {
		args = append(args, "namespaces")
	}
	if network {
		args = append(args, "network")
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

// explainUserNS turns the failure to create a user namespace into what
// the person can look up: the setting that forbids it, where one does.
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
// writes what it found as JSON.
func probeChild(args []string, stdout io.Writer) int {
	var k Kernel
	if slices.Contains(args, "namespaces") {
		switch {
		case os.Getpid() != 1:
			k.NamespacesWhy = "the launcher did not start in a new PID namespace"
		default:
			if err := probeMounts(); err != nil {
				k.NamespacesWhy = explainDenied(err)
			} else {
				k.Namespaces = true
			}
		}
		if slices.Contains(args, "network") {
			if err := loopbackUp(); err != nil {
				k.NetworkWhy = err.Error()
			} else {
				k.Network = true
			}
		}
	}
	// psx, which sets no_new_privs on every thread, finds the threads in
	// /proc: in a new PID namespace only once /proc is its own.
	if namespaced := slices.Contains(args, "namespaces"); !namespaced || k.Namespaces {
		if err := probeSeccomp(); err != nil {
			k.SeccompWhy = err.Error()
		} else {
			k.Seccomp = true
		}
	}
	if err := json.NewEncoder(stdout).Encode(k); err != nil {
		return ExitFailure
	}
	return 0
}

// probeMounts does, in the probe's private mount namespace, each kind of
// mount a command's view needs: a covered folder with a folder shown in
// it, an empty file, a read-only folder, and a /proc and a /dev/pts of its
// own.
func probeMounts() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	tmp := "/tmp"
	if err := cover(coverage{dir: tmp, private: true}, nil); err != nil {
		return err
	}
	shown := filepath.Join(tmp, "shown")
	if err := os.Mkdir(shown, 0o755); err != nil {
		return err
	}
	if err := cover(coverage{dir: tmp}, []keep{{path: shown}}); err != nil {
		return err
	}
	if err := readOnlyBind(shown); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(shown, "f"), nil, 0o644); !errors.Is(err, unix.EROFS) {
		return fmt.Errorf("a read-only folder took a write (%v)", err)
	}
	if err := cover(coverage{dir: tmp, private: true}, nil); err != nil {
		return err
	}
	secret := filepath.Join(tmp, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		return err
	}
	if err := hide(secret, nil, nil); err != nil {
		return err
	}
	if data, err := os.ReadFile(secret); err != nil || len(data) != 0 {
		return fmt.Errorf("a hidden file still reads %q (%v)", data, err)
	}
	if err := mountProc(); err != nil {
		return err
	}
	return privateTerminals()
}

// probeSeccomp installs the UNIX socket filter on the probe itself and
// checks that it refuses a UNIX socket.
func probeSeccomp() error {
	if err := allThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := refuseUnixSockets(); err != nil {
		return err
	}
	return checkUnixSocketsRefused()
}
