package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The launcher builds the command's world in its own mount namespace,
// before Landlock and before it drops its capabilities, from an empty file
// system: the system's folders read-only, an empty home with read-only
// views of what tools need, private temporary folders, a /dev of a few
// devices, a /proc of its own processes, and the writable folders. A place
// nobody thought of is out of reach, and chmod, utimes or setxattr fail
// wherever the command cannot write. The command can undo none of it: it
// holds no capability, seccomp refuses every mount call, and the kernel
// locks these mounts against a namespace it might create.

// systemPlaces are the system's folders a command sees, read-only.
var systemPlaces = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap", "/sys"}

// deviceNodes are the devices a command's /dev holds.
var deviceNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// oldRoot is where the person's file system stays while the world is built.
const oldRoot = "/.courier-old-root"

// A mount is one step of building the world.
type mount struct {
	kind        mountKind
	target      string // as the command sees it
	source      string // the person's path, for show, protect, bind and overlay
	link        string // the link's text
	layer, work string // an overlay's folders of the session
	fds         [3]int // source, layer and work, opened before the old root goes
}

type mountKind int

const (
	link      mountKind = iota // a symbolic link, as the system has it (/bin -> usr/bin)
	show                       // a place of the person's, read-only, when it can be placed
	cover                      // a hidden place: empty folder or empty file, read-only
	emptyHome                  // the private home: an empty folder, read-only
	bind                       // a writable folder
	overlay                    // a cache of the person's under the session's writable layer
	protect                    // a path inside a writable folder, read-only
	private                    // an empty temporary folder of the command's own
)

// buildWorld makes the command's world and makes it the root.
func buildWorld(opts Options) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	plan := planWorld(opts)
	defer func() {
		for _, m := range plan {
			for _, fd := range m.fds {
				if fd > 0 {
					unix.Close(fd)
				}
			}
		}
	}()
	if err := openSources(plan); err != nil {
		return err
	}
	if err := enterEmptyRoot(); err != nil {
		return err
	}
	if err := mountProc(); err != nil {
		return err
	}
	if err := makeDev(); err != nil {
		return err
	}
	covers := []string{"/", "/dev"}
	for _, m := range plan {
		covered, err := m.apply()
		if err != nil {
			return err
		}
		if covered {
			covers = append(covers, m.target)
		}
	}
	if err := unix.Unmount(oldRoot, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("leave the old root: %w", err)
	}
	if err := os.Remove(oldRoot); err != nil {
		return fmt.Errorf("leave the old root: %w", err)
	}
	// Only now: the folders above were made in them.
	for _, c := range covers {
		if err := unix.Mount("", c, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", c, err)
		}
	}
	return nil
}

// planWorld lists the steps in order, outer places first.
func planWorld(opts Options) []mount {
	var plan []mount
	add := func(kind mountKind, target, source string) {
		plan = append(plan, mount{kind: kind, target: filepath.Clean(target), source: source})
	}
	for _, p := range systemPlaces {
		info, err := os.Lstat(p)
		switch {
		case err != nil:
		case info.Mode()&os.ModeSymlink != 0:
			if text, err := os.Readlink(p); err == nil {
				plan = append(plan, mount{kind: link, target: p, link: text})
			}
		default:
			add(show, p, p)
		}
	}
	// resolv.conf is often a link into /run, which commands do not see.
	if real, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !underAny(real, systemPlaces) {
		add(show, real, real)
	}
	home := ""
	if filepath.IsAbs(opts.Home) && filepath.Clean(opts.Home) != "/" {
		home = filepath.Clean(opts.Home)
	}
	hidden := append(slices.Clone(opts.Hide), SecretPlaces(home)...)
	writable := opts.writable()
	for _, p := range opts.Show {
		// Never the home or a secret place, whatever PATH holds, nor a
		// place in a writable folder, where a command could have made a
		// link to any place of the person's.
		real := realPath(p)
		if real == "/" || (home != "" && real == realPath(home)) || underAny(p, hidden) || underAny(real, hidden) || underAny(p, writable) {
			continue
		}
		add(show, p, p)
	}
	switch {
	case home == "":
	case opts.HomeReadable:
		add(show, home, home)
		hidden = append(hidden, opts.Sockets.Existing()...)
	default:
		add(emptyHome, home, "")
	}
	for _, p := range hidden {
		add(cover, p, "")
	}
	for _, d := range TempDirs() {
		add(private, d, "")
	}
	realWritable := make([]string, 0, len(opts.Writable))
	for _, w := range opts.Writable {
		realWritable = append(realWritable, realPath(w))
		add(bind, realPath(w), w)
	}
	for _, c := range opts.caches() {
		if c.work == "" {
			add(bind, c.view, c.layer)
			continue
		}
		plan = append(plan, mount{kind: overlay, target: c.view, source: c.Person, layer: c.layer, work: c.work})
	}
	for _, p := range opts.ReadOnly {
		// Only what lies inside a writable folder, links resolved, is
		// protected: a planted link must not bring an outside place in.
		real, err := filepath.EvalSymlinks(p)
		if err == nil && underAny(real, realWritable) {
			add(protect, real, real)
		}
	}
	slices.SortStableFunc(plan, func(a, b mount) int {
		return strings.Count(a.target, "/") - strings.Count(b.target, "/")
	})
	return plan
}

// openSources opens every place the plan mounts while the person's root
// is the root: the mounts take these, whatever the paths name by then.
func openSources(plan []mount) error {
	for i := range plan {
		m := &plan[i]
		paths, what := []string{m.source}, "open"
		switch m.kind {
		case overlay:
			paths, what = []string{m.source, m.layer, m.work}, "open the cache layer"
		case link, cover, emptyHome, private:
			continue
		}
		for j, p := range paths {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
			switch {
			case err != nil && m.kind == show:
				fd = -1 // gone since: nothing to show
			case err != nil:
				return fmt.Errorf("%s %s: %w", what, p, err)
			}
			m.fds[j] = fd
		}
	}
	return nil
}

// enterEmptyRoot makes an empty tmpfs the root, the old one at oldRoot.
func enterEmptyRoot() error {
	const base = "/tmp"
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("make an empty root: %w", err)
	}
	if err := os.Mkdir(base+oldRoot, 0o700); err != nil {
		return fmt.Errorf("make an empty root: %w", err)
	}
	if err := unix.PivotRoot(base, base+oldRoot); err != nil {
		return fmt.Errorf("enter the empty root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("enter the empty root: %w", err)
	}
	return os.Mkdir("/proc", 0o555)
}

// makeDev gives the command a /dev of the common devices and a devpts of
// its own: new pseudo-terminals, but none of the person's.
func makeDev() error {
	if err := os.Mkdir("/dev", 0o755); err != nil {
		return fmt.Errorf("make /dev: %w", err)
	}
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("make /dev: %w", err)
	}
	for _, d := range deviceNodes {
		p := "/dev/" + d
		if err := mountPoint(p, false); err != nil {
			return err
		}
		if err := unix.Mount(oldRoot+p, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("give the command %s: %w", p, err)
		}
	}
	for name, target := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, "/dev/"+name); err != nil {
			return fmt.Errorf("make /dev/%s: %w", name, err)
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("make %s: %w", d, err)
		}
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount a private /dev/pts: %w", err)
	}
	return nil
}

// apply makes one step; covered: an empty folder to make read-only last.
func (m mount) apply() (covered bool, err error) {
	switch m.kind {
	case link:
		if _, err := os.Lstat(m.target); err == nil {
			return false, nil
		}
		if err := os.Symlink(m.link, m.target); err != nil {
			return false, fmt.Errorf("make %s: %w", m.target, err)
		}
	case show:
		if m.fds[0] < 0 || visible(m.target, m.fds[0]) {
			return false, nil
		}
		// Showing is a convenience: left out where it cannot be placed.
		if mountPoint(m.target, isDir(m.fds[0])) != nil {
			return false, nil
		}
		return false, bindFD(m.fds[0], m.target, false)
	case bind, protect:
		if err := mountPoint(m.target, isDir(m.fds[0])); err != nil {
			return false, err
		}
		return false, bindFD(m.fds[0], m.target, m.kind == bind)
	case overlay:
		if err := mountPoint(m.target, true); err != nil {
			return false, err
		}
		fd := func(n int) string { return "/proc/self/fd/" + strconv.Itoa(n) }
		// volatile: a cache need not sync its file system at every
		// command's end; the mark it leaves, which refuses the next
		// mount, goes with the work folder.
		_ = unix.Fchmodat(m.fds[2], "work", 0o700, 0)
		if err := os.RemoveAll(fd(m.fds[2]) + "/work"); err != nil {
			return false, fmt.Errorf("clear the session's layer over %s: %w", m.source, err)
		}
		data := "lowerdir=" + fd(m.fds[0]) + ",upperdir=" + fd(m.fds[1]) + ",workdir=" + fd(m.fds[2]) + ",userxattr,volatile"
		if err := unix.Mount("overlay", m.target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, data); err != nil {
			return false, fmt.Errorf("mount the session's layer over %s: %w", m.source, err)
		}
	case emptyHome:
		if _, err := os.Lstat(m.target); err != nil {
			return false, mountPoint(m.target, true)
		}
		fallthrough
	case cover:
		info, err := os.Lstat(m.target)
		switch {
		case err != nil:
			return false, nil // not in the world: nothing to hide
		case info.IsDir():
			if err := unix.Mount("tmpfs", m.target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
				return false, fmt.Errorf("hide %s: %w", m.target, err)
			}
			return true, nil
		case info.Mode()&os.ModeSymlink != 0:
			return false, nil // a link shows nothing by itself
		}
		if err := unix.Mount("/dev/null", m.target, "", unix.MS_BIND, ""); err != nil {
			return false, fmt.Errorf("hide %s: %w", m.target, err)
		}
		return false, setReadOnly(m.target)
	case private:
		if err := os.MkdirAll(m.target, 0o755); err != nil {
			return false, fmt.Errorf("make %s: %w", m.target, err)
		}
		if err := unix.Mount("tmpfs", m.target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return false, fmt.Errorf("make %s: %w", m.target, err)
		}
	}
	return false, nil
}

// bindFD mounts what fd names, with what is below, at target.
func bindFD(fd int, target string, writable bool) error {
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("place %s: %w", target, err)
	}
	if writable {
		return nil
	}
	return setReadOnly(target)
}

// visible reports whether target already shows the place fd names.
func visible(target string, fd int) bool {
	var a, b unix.Stat_t
	return unix.Stat(target, &a) == nil && unix.Fstat(fd, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

func isDir(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// mountPoint makes a folder (or file) at p to mount on.
func mountPoint(p string, dir bool) error {
	if dir {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("make room for %s: %w", p, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("make room for %s: %w", p, err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("make room for %s: %w", p, err)
	}
	return f.Close()
}

// setReadOnly makes the mounts at and below p read-only. Before 5.12,
// without mount_setattr, a remount must repeat the locked flags.
func setReadOnly(p string) error {
	err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
	if !errors.Is(err, unix.ENOSYS) {
		if err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
		return nil
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("make %s read-only: %w", p, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range [][2]int64{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st.Flags&f[0] != 0 {
			flags |= uintptr(f[1])
		}
	}
	if err := unix.Mount("", p, "", flags, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", p, err)
	}
	return nil
}

func realPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

func underAny(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool {
		rel, err := filepath.Rel(d, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	})
}

// procReadOnly are the places of /proc that change the machine, which a
// root command would otherwise own (Landlock refuses writing them too).
var procReadOnly = []string{"sys", "sysrq-trigger", "irq", "bus", "fs"}

// mountProc gives the command a /proc of its PID namespace.
func mountProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	for _, name := range procReadOnly {
		p := "/proc/" + name
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("protect %s: %w", p, err)
		}
		if err := setReadOnly(p); err != nil {
			return err
		}
	}
	return nil
}
