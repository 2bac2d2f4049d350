package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/workspace"
)

// fixture is a workspace and a session's history, both in temporary
// folders of their own.
type fixture struct {
	t     testing.TB
	dir   string
	store Store
	id    string
	ws    *workspace.Workspace
	h     *History
}

func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), store: Store{Dir: filepath.Join(t.TempDir(), "sessions")}, id: "0000000a"}
	f.open(opts)
	return f
}

// open (re)opens the history, as a new courier process would.
func (f *fixture) open(opts Options) {
	f.t.Helper()
	if f.h != nil {
		f.h.Close()
		f.ws.Close()
	}
	ws, err := workspace.Open(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	h, err := f.store.Open(f.id, ws, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	f.ws, f.h = ws, h
	f.t.Cleanup(func() {
		if f.h == h {
			h.Close()
			ws.Close()
			f.h = nil
		}
	})
}

func (f *fixture) folder() string { return f.store.Folder(f.id) }

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

// turn opens turn seq as the engine does, its begin record naming one
// RUN_COMMAND.
func (f *fixture) turn(seq int) *Turn {
	f.t.Helper()
	t, err := f.h.Turn(seq)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, ok := t.Begun(); !ok {
		if err := t.Add(Record{Kind: RecordBegin, ReplyHash: fmt.Sprint(seq), Commands: []command.Command{{Type: command.RunCommand, Command: "sh"}}}); err != nil {
			f.t.Fatal(err)
		}
	}
	return t
}

// command records one turn made of one RUN_COMMAND running script, and
// returns what it changed.
func (f *fixture) command(seq int, script string) Changes {
	f.t.Helper()
	t := f.turn(seq)
	defer t.Close()
	if err := t.Before(nil); err != nil {
		f.t.Fatal(err)
	}
	if err := t.Append(Record{Kind: RecordStart}); err != nil {
		f.t.Fatal(err)
	}
	f.sh(script)
	ch, err := t.After(0, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := t.Finish(); err != nil {
		f.t.Fatal(err)
	}
	return ch
}

func (f *fixture) undo(seq int) Report {
	f.t.Helper()
	rep, err := f.h.Undo(seq)
	if err != nil {
		f.t.Fatal(err)
	}
	return rep
}

// lost reports whether undo cannot reverse all of a command's changes.
func lost(cs Changes) bool {
	for _, c := range cs.List {
		if !c.Undoable() {
			return true
		}
	}
	return false
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

// storedContents returns everything the content store holds.
func storedContents(t testing.TB, h *History) []string {
	t.Helper()
	if err := h.obj.load(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for x := range h.obj.table {
		data, err := h.obj.read(x)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

func storeHolds(t testing.TB, h *History, marker string) bool {
	t.Helper()
	for _, c := range storedContents(t, h) {
		if strings.Contains(c, marker) {
			return true
		}
	}
	return false
}

// duOf is what du -s counts for a folder: the blocks allocated to it
// and everything in it.
func duOf(t testing.TB, dir string) int64 {
	t.Helper()
	out, err := exec.Command("du", "-sk", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	kb, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return kb << 10
}
