package workspace

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// The listing's cost is linear in the number of entries, however deeply
// they nest: a chain of folders 5,000 deep once took minutes, each folder
// opened again by its path from the root. Counted, not timed: the steps
// the walk asks of the kernel for a chain four times as deep must be about
// four times as many (a cost quadratic in depth would be sixteen times).
// Each level holds a file, an empty side folder and the next level, so the
// walk climbs back through every level too. Both walks are of one chain,
// the shallow one started 1,500 levels down.
func TestWalkStepsLinearInDepth(t *testing.T) {
	const depth, shallowDepth = 2000, 500
	top, err := unix.Open(t.TempDir(), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(top)
	var shallowTop int
	fd := top
	for level := range depth {
		if level == depth-shallowDepth {
			shallowTop = fd
		}
		next := makeLevel(t, fd)
		if fd != top && fd != shallowTop {
			unix.Close(fd)
		}
		fd = next
	}
	unix.Close(fd)
	defer unix.Close(shallowTop)
	steps := func(dirfd, depth int) int {
		// The folder's path is too long to name: its descriptor is used.
		w, err := Open(fmt.Sprintf("/proc/self/fd/%d", dirfd))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		n, entries := 0, 0
		enter := func(dir string, parent *ignoreDir, read func(string) []byte) *ignoreDir {
			return w.enterIgnore(dir, parent, read, nil)
		}
		h := walkHooks{enter: enter, steps: &n}
		h.visit = func(e walkEntry, dir *ignoreDir) bool {
			entries++
			return e.isDir && !dir.ignored(e.path, e.isDir)
		}
		if err := w.walk(h); err != nil {
			t.Fatal(err)
		}
		if want := 3 * depth; entries != want {
			t.Fatalf("depth %d: the walk visited %d entries, want %d", depth, entries, want)
		}
		return n
	}
	shallow, deep := steps(shallowTop, shallowDepth), steps(top, depth)
	t.Logf("steps: %d for depth %d, %d for depth %d", shallow, shallowDepth, deep, depth)
	if shallow < 3*shallowDepth {
		t.Fatalf("depth %d took %d steps: fewer than one an entry, so the count misses some", shallowDepth, shallow)
	}
	if ratio := float64(deep) / float64(shallow); ratio > 4.2 {
		t.Errorf("a chain 4 times as deep took %d steps against %d (%.1f times): the walk is not linear in depth", deep, shallow, ratio)
	}
}

// makeLevel makes a file f, an empty folder s and the next level d in the
// folder dirfd, and returns d open. Levels
// are made each from the last, since their paths pass the kernel's limit.
func makeLevel(t *testing.T, dirfd int) int {
	t.Helper()
	for _, d := range []string{"d", "s"} {
		if err := unix.Mkdirat(dirfd, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := unix.Openat(dirfd, "f", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(f)
	next, err := unix.Openat(dirfd, "d", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return next
}
