//go:build linux

package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/workspace"
)

// fixture is a workspace with a snapshot store, both in temporary
// folders of their own.
type fixture struct {
	t     testing.TB
	dir   string
	store string
	ws    *workspace.Workspace
	s     *Store
}

func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), store: filepath.Join(t.TempDir(), "snapshot")}
	f.open(opts)
	return f
}

// open (re)opens the store, as a new courier process would.
func (f *fixture) open(opts Options) {
	f.t.Helper()
	if f.s != nil {
		f.s.Close()
		f.ws.Close()
	}
	ws, err := workspace.Open(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := Open(f.store, ws, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	f.ws, f.s = ws, s
	f.t.Cleanup(func() {
		if f.s == s {
			s.Close()
			ws.Close()
			f.s = nil
		}
	})
}

// write makes files (and folders, for names ending in "/") in the
// workspace.
func (f *fixture) write(files map[string]string) {
	f.t.Helper()
	writeTree(f.t, f.dir, files)
}

func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sh runs a shell script in the workspace, as a RUN_COMMAND would.
func (f *fixture) sh(script string) string {
	f.t.Helper()
	return runIn(f.t, f.dir, script)
}

func runIn(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// command records one turn made of one RUN_COMMAND running script, and
// returns what it changed.
func (f *fixture) command(seq int, script string) Changes {
	f.t.Helper()
	t, err := f.s.Turn(seq)
	if err != nil {
		f.t.Fatal(err)
	}
	defer t.Close()
	if err := t.Before(nil); err != nil {
		f.t.Fatal(err)
	}
	f.sh(script)
	ch, err := t.After(0, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := t.Commit(); err != nil {
		f.t.Fatal(err)
	}
	return ch
}

func (f *fixture) undo(seq int) UndoReport {
	f.t.Helper()
	rep, err := f.s.Undo(seq, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return rep
}

// listing describes a tree the way a person checking an undo would: per
// path its type, mode, size and content hash or symlink target, without
// following symlinks.
func listing(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%q %s %o", rel, info.Mode().Type(), info.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		switch {
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			line += fmt.Sprintf(" %d %s", info.Size(), hex.EncodeToString(sum[:8]))
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" -> %q", target)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// sameTree fails the test with the differing lines if two listings
// differ.
func sameTree(t testing.TB, what, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := lineSet(got), lineSet(want)
	var b strings.Builder
	for l := range w {
		if !g[l] {
			fmt.Fprintf(&b, "  missing: %s\n", l)
		}
	}
	for l := range g {
		if !w[l] {
			fmt.Fprintf(&b, "  unexpected: %s\n", l)
		}
	}
	t.Fatalf("%s: the tree differs from the one before the turn:\n%s", what, b.String())
}

func lineSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		m[l] = true
	}
	return m
}

// storedContents returns everything the content store holds, decoded.
func storedContents(t testing.TB, s *Store) []string {
	t.Helper()
	use, err := s.diskUse()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for h := range mergeKeys(use.loose, use.packed) {
		data, err := s.obj.read(h)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

func mergeKeys(ms ...map[Hash]int64) map[Hash]bool {
	out := map[Hash]bool{}
	for _, m := range ms {
		for h := range m {
			out[h] = true
		}
	}
	return out
}
