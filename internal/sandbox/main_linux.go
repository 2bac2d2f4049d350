package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Main is the launcher, run when os.Args[1] == ExecArg: it confines itself
// and runs the command (see runInit), returning its status, or ExitFailure
// after writing "courier: error: sandbox: ..." to stderr.
func Main(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == probeArg {
		return probeChild(args[1:], os.Stdout)
	}
	argv, err := parseArgs(args)
	if err != nil {
		return fail(stderr, err)
	}
	req, err := readRequest(os.Stdin)
	if err != nil {
		return fail(stderr, err)
	}
	opts := req.Options
	null, err := os.Open(os.DevNull) // on stdin once the options are read
	if err == nil {
		err = syscall.Dup3(int(null.Fd()), 0, 0)
		null.Close()
	}
	if err != nil {
		return fail(stderr, fmt.Errorf("put %s on stdin: %w", os.DevNull, err))
	}
	if err := joinCgroups(opts.Limits.Cgroups); err != nil {
		return fail(stderr, err)
	}
	// A new session keyring in place of the person's; where keyring calls
	// are refused already, there is none to leave.
	_, _ = unix.KeyctlInt(unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0)
	if opts.Kernel.Namespaces {
		if err := enterNamespaces(opts); err != nil {
			return fail(stderr, err)
		}
	}
	if err := confine(opts); err != nil {
		return fail(stderr, err)
	}
	if len(opts.Limits.Cgroups) == 0 {
		if err := setRlimits(opts.Limits); err != nil {
			return fail(stderr, err)
		}
	}
	if opts.Kernel.Namespaces {
		code, err := runInit(argv, req.Env)
		if err != nil {
			return fail(stderr, err)
		}
		return code
	}
	err = syscall.Exec(argv[0], argv, req.Env)
	return fail(stderr, fmt.Errorf("run %s: %w", argv[0], err))
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "courier: error: sandbox: %v\n", err)
	return ExitFailure
}

// enterNamespaces builds the command's world and brings up its loopback.
func enterNamespaces(opts Options) error {
	if os.Getpid() != 1 {
		return fmt.Errorf("the launcher is process %d, not the first process of a new PID namespace", os.Getpid())
	}
	// Entered before the new mounts, the working folder would show what
	// lies beneath them.
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("find the working folder: %w", err)
	}
	if err := buildWorld(opts); err != nil {
		return err
	}
	if err := os.Chdir(wd); err != nil {
		return fmt.Errorf("enter the working folder again: %w", err)
	}
	if opts.NoNetwork && opts.Kernel.Network {
		return loopbackUp()
	}
	return nil
}

// selfExe names the inode courier runs from, resolved in the new process
// while it is still courier: replacing courier's file changes nothing.
const selfExe = "/proc/self/exe"

// Launcher returns how to start argv (an absolute path first) confined.
func Launcher(opts Options, argv, env []string) (Launch, error) {
	data, err := encodeRequest(opts, env)
	if err != nil {
		return Launch{}, err
	}
	return Launch{
		Path:     selfExe,
		Args:     append([]string{"courier", ExecArg, "--"}, argv...),
		Attr:     launchAttr(opts.Kernel.Namespaces, opts.NoNetwork && opts.Kernel.Network),
		Env:      []string{},
		Stdin:    bytes.NewReader(data),
		Confined: true,
	}, nil
}

// launchAttr starts the launcher in its own session and, where the kernel
// allows, in new user, mount, PID, IPC, UTS (and network) namespaces,
// mapping only the person's own user and group. Pdeathsig ends it, and so
// its namespace, when courier dies, even by kill -9.
func launchAttr(namespaces, network bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if !namespaces {
		return attr
	}
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if network {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	// Kept across exec, not being root in the namespace, for the mounts,
	// the loopback and the securebits; dropped before the command starts.
	// An overlay's work folder has no permissions: only CAP_DAC_OVERRIDE
	// enters it, which reaches only the person's own files here.
	attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE}
	return attr
}

// runInit runs the command as the PID namespace's first process: it reaps,
// passes signals on, and its exit makes the kernel end every process left.
func runInit(argv, env []string) (int, error) {
	// Not dumpable: the command cannot read its memory or trace it.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("make the launcher private: %w", err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			// -1: every process of the namespace but the launcher.
			_ = syscall.Kill(-1, s.(syscall.Signal))
		}
	}()
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", argv[0], err)
	}
	for {
		var status syscall.WaitStatus
		got, err := syscall.Wait4(-1, &status, 0, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, fmt.Errorf("wait for %s: %w", argv[0], err)
		case got != pid:
			continue // an orphan reaped
		case status.Signaled():
			return 128 + int(status.Signal()), nil
		default:
			return status.ExitStatus(), nil
		}
	}
}

// loopbackUp brings up lo, the only interface of a new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		defer unix.Close(fd)
		var ifr *unix.Ifreq
		if ifr, err = unix.NewIfreq("lo"); err == nil {
			if err = unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err == nil {
				ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
				err = unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("bring up the loopback: %w", err)
	}
	return nil
}

// A command's processes and memory are bounded by a control group of its
// own under courier's, v2 or (root only) v1, else by resource limits.

// NewCgroup makes a control group bounded as l says.
func NewCgroup(l Limits) (*Cgroup, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read courier's control group: %w", err)
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	// courier's group in each hierarchy: "cgroup2", or a v1 controller.
	groups := map[string]string{}
	for line := range strings.Lines(string(own)) {
		if f := strings.SplitN(strings.TrimSpace(line), ":", 3); len(f) == 3 && f[0] == "0" {
			groups["cgroup2"] = f[2]
		} else if len(f) == 3 {
			for _, ctl := range strings.Split(f[1], ",") {
				groups[ctl] = f[2]
			}
		}
	}
	name := "courier-" + rand.Text()[:12]
	// A memory-bound command stays out of swap, where it would slow the
	// machine instead of meeting its limit.
	swapMax := "max"
	if l.Memory > 0 {
		swapMax = "0"
	}
	var tried []string
	if group, ok := groups["cgroup2"]; ok && mounts["cgroup2"] != "" {
		c := &Cgroup{}
		err := c.make(filepath.Join(mounts["cgroup2"], group, name), []limitFile{{"pids.max", count(l.Processes), false}, {"memory.max", count(l.Memory), false}, {"memory.swap.max", swapMax, true}})
		if err == nil {
			return c, nil
		}
		tried = append(tried, "cgroup v2: "+err.Error())
	}
	c := &Cgroup{}
	mem := count(l.Memory)
	if mem == "max" {
		mem = "-1"
	}
	for _, ctl := range []struct {
		name   string
		limits []limitFile
	}{
		{"pids", []limitFile{{"pids.max", count(l.Processes), false}}},
		{"memory", []limitFile{{"memory.limit_in_bytes", mem, false}, {"memory.memsw.limit_in_bytes", mem, true}}},
	} {
		why := "no " + ctl.name + " hierarchy"
		if base, group := mounts[ctl.name], groups[ctl.name]; base != "" && group != "" {
			if err = c.make(filepath.Join(base, group, name), ctl.limits); err == nil {
				continue
			}
			why = err.Error()
		}
		c.Remove()
		return nil, fmt.Errorf("no cgroup with the pids and memory controllers (%s)", strings.Join(append(tried, "cgroup v1: "+why), "; "))
	}
	return c, nil
}

// limitFile is a limit as a control group file takes it (swap's optional).
type limitFile struct {
	name, value string
	optional    bool
}

// count is a limit as cgroup files write it.
func count[T int | int64](n T) string {
	if n <= 0 {
		return "max"
	}
	return strconv.FormatInt(int64(n), 10)
}

func (c *Cgroup) make(dir string, limits []limitFile) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	c.dirs = append(c.dirs, dir)
	for _, l := range limits {
		err := os.WriteFile(filepath.Join(dir, l.name), []byte(l.value), 0)
		if err != nil && !(l.optional && errors.Is(err, os.ErrNotExist)) {
			c.Remove()
			return fmt.Errorf("set %s: %w", l.name, err)
		}
	}
	return nil
}

// cgroupMounts maps "cgroup2" and the v1 controllers to their mounts.
func cgroupMounts() (map[string]string, error) {
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read the mounts: %w", err)
	}
	out := map[string]string{}
	for line := range strings.Lines(string(info)) {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE SUPER
		before, after, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " - ")
		fields, tail := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 5 || len(tail) < 3 || fields[3] != "/" {
			continue
		}
		switch tail[0] {
		case "cgroup2":
			out["cgroup2"] = fields[4]
		case "cgroup":
			for _, opt := range strings.Split(tail[2], ",") {
				if opt == "pids" || opt == "memory" {
					out[opt] = fields[4]
				}
			}
		}
	}
	return out, nil
}

// joinCgroups moves the launcher, and so all it starts, into the groups.
func joinCgroups(dirs []string) error {
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte("0"), 0); err != nil {
			return fmt.Errorf("enter the command's control group: %w", err)
		}
	}
	return nil
}

func setRlimits(l Limits) error {
	if l.Processes > 0 {
		// +1: the launcher itself is one of the user's processes here.
		n := uint64(l.Processes + 1)
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("limit the processes: %w", err)
		}
	}
	if l.Memory > 0 {
		n := uint64(l.Memory)
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("limit the memory: %w", err)
		}
	}
	return nil
}

// probeArg, after ExecArg, makes the launcher try the layers.
const probeArg = "probe"

// Probe finds what the kernel allows by trying, in a launcher, the mounts,
// loopback, seccomp filter and an overlay in caches ("" tries none).
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
			defer removeTree(caches, filepath.Base(overlayDir))
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

// runProbe runs the probe in the namespaces asked for; error: it could not.
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

// probeChild is the launcher's side of Probe, writing its findings as JSON.
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

// probeMounts builds a world with a read-only folder in a writable one.
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

// probeOverlay checks that a write through an overlay lands in its upper.
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

// probeSeccomp checks that the filter refuses keyrings and UNIX sockets.
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
