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

// The launcher builds the command's view of the files in its own mount
// namespace, before Landlock (which forbids mount changes) and before it
// drops its capabilities. Nothing it mounts reaches the person's mount
// table, and the command can undo none of it: it holds no capability,
// Landlock refuses it every mount operation, and the kernel locks these
// mounts against a namespace the command might create.

// keep is a folder shown inside a folder that is covered.
type keep struct {
	path     string
	writable bool
}

// isolate makes the command's view: private temporary folders, a hidden
// home, empty secret places, a read-only .git, and a /proc and a /dev/pts
// of its own.
func isolate(opts Options) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	keeps := keepList(opts)
	for _, c := range coverList(opts) {
		if err := cover(c, keeps); err != nil {
			return err
		}
	}
	covered := TempDirs()
	hidden := append(SecretPlaces(opts.Home), opts.Sockets.Existing()...)
	for _, p := range append(hidden, opts.Hide...) {
		if err := hide(p, covered, keeps); err != nil {
			return err
		}
	}
	for _, p := range opts.ReadOnly {
		if err := readOnlyBind(p); err != nil {
			return err
		}
	}
	if err := mountProc(); err != nil {
		return err
	}
	return privateTerminals()
}

// keepList is every folder the covers must leave visible: the writable
// ones as they are, the shown ones read-only.
func keepList(opts Options) []keep {
	var keeps []keep
	for _, p := range opts.writable() {
		keeps = append(keeps, keep{realPath(p), true})
	}
	for _, p := range opts.Show {
		keeps = append(keeps, keep{realPath(p), false})
	}
	// Parents first, so a folder inside a kept one is skipped.
	slices.SortStableFunc(keeps, func(a, b keep) int { return strings.Compare(a.path, b.path) })
	return keeps
}

// coverage is a folder replaced by an empty one.
type coverage struct {
	dir string
	// private: the command may write it (a temporary folder); otherwise
	// it is read-only once the kept folders are in place.
	private bool
}

// coverList is what the command sees empty but for the kept folders: the
// system's temporary folders (private to the command), the session
// temporary folders of other sessions, and the home folder when hidden.
// Outer folders come first.
func coverList(opts Options) []coverage {
	var out []coverage
	seen := map[string]bool{}
	add := func(dir string, private bool) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			return
		}
		seen[real] = true
		out = append(out, coverage{real, private})
	}
	for _, d := range TempDirs() {
		add(d, true)
	}
	// A home of "/" (some service accounts) is not hidden: that would
	// hide the system with it.
	if opts.HideHome != "" && filepath.Clean(opts.HideHome) != "/" {
		add(opts.HideHome, false)
	}
	if opts.Caches != "" {
		add(filepath.Dir(opts.TempDir()), false)
	}
	slices.SortStableFunc(out, func(a, b coverage) int { return len(a.dir) - len(b.dir) })
	return out
}

// cover mounts an empty tmpfs on c.dir and brings back the kept folders
// inside it, each opened before the tmpfs hides it.
func cover(c coverage, keeps []keep) error {
	var inside []keep
	for _, k := range keeps {
		if k.path == c.dir {
			if k.writable {
				return nil // the whole folder is writable: nothing to cover
			}
			// A folder shown read-only (a PATH entry) never shows the very
			// folder that is covered: PATH=$HOME:... must not bring a
			// hidden home back, nor PATH=~/.ssh a secret place. Folders
			// above a covered one are not within it, so never shown here.
			continue
		}
		// A writable folder stays writable: a read-only one inside it is
		// not mounted again, one around it is mounted first (keeps are
		// sorted parents first) and the writable one over it.
		if within(k.path, c.dir) && (k.writable || !slices.ContainsFunc(keeps, func(o keep) bool { return o.writable && within(k.path, o.path) })) {
			inside = append(inside, k)
		}
	}
	type opened struct {
		keep
		fd  int
		dir bool
	}
	var open []opened
	defer func() {
		for _, o := range open {
			unix.Close(o.fd)
		}
	}()
	for _, k := range inside {
		fd, err := unix.Open(k.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // missing: nothing to show
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			continue
		}
		open = append(open, opened{k, fd, st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	mode := "mode=0755"
	if c.private {
		mode = "mode=1777"
	}
	if err := unix.Mount("tmpfs", c.dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, mode); err != nil {
		return fmt.Errorf("cover %s: %w", c.dir, err)
	}
	for _, o := range open {
		if err := mountPoint(o.path, o.dir); err != nil {
			return err
		}
		src := "/proc/self/fd/" + strconv.Itoa(o.fd)
		if err := unix.Mount(src, o.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("show %s: %w", o.path, err)
		}
		if !o.writable {
			if err := setReadOnly(o.path); err != nil {
				return err
			}
		}
	}
	if c.private {
		return nil
	}
	if err := unix.Mount("", c.dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("make the cover of %s read-only: %w", c.dir, err)
	}
	return nil
}

// mountPoint creates what a bind mount of a folder (or file) needs at p.
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

// hide makes p look empty: an empty read-only folder, or /dev/null for a
// file or socket. Folders that hold a kept one keep it.
func hide(p string, covered []string, keeps []keep) error {
	info, err := os.Stat(p)
	if err != nil {
		return nil // nothing there to hide
	}
	if info.IsDir() {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || slices.Contains(covered, real) {
			return nil // a private temporary folder already
		}
		return cover(coverage{dir: real}, keeps)
	}
	if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("hide %s: %w", p, err)
	}
	return setReadOnly(p)
}

// readOnlyBind makes p (a folder or file, with everything below it)
// read-only in the command's view.
func readOnlyBind(p string) error {
	if _, err := os.Stat(p); err != nil {
		return nil // gone, or a link to what the command cannot see
	}
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("protect %s: %w", p, err)
	}
	return setReadOnly(p)
}

// setReadOnly makes the mount at p and those below it read-only. Kernels
// before 5.12 lack mount_setattr; a remount must then repeat the flags the
// kernel locked on the original mount.
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

// mountProc gives the command a /proc of its PID namespace: courier's and
// the person's processes are not in it.
func mountProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// realPath resolves symbolic links in p, so that it compares with the
// covered folders, which are resolved too.
func realPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// privateTerminals gives the command a devpts instance of its own: the
// person's terminals (/dev/pts/N) are not in it, so a command cannot write
// to them, while programs that open a new pseudo-terminal still can.
func privateTerminals() error {
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount a private /dev/pts: %w", err)
	}
	if err := unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("use the private /dev/pts/ptmx: %w", err)
	}
	return nil
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
