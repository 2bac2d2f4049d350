package workspace_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/workspace"
)

// TestBatch makes writes, removals and keeps together; each operation has
// its own result, a failing one does not stop the others, and no temporary
// file is left.
func TestBatch(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string, perm os.FileMode) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), perm); err != nil {
			t.Fatal(err)
		}
	}
	write("exec.sh", "old\n", 0o755)
	write("gone.txt", "bye\n", 0o644)
	write("kept.txt", "as is\n", 0o644)
	write("restored.txt", "x\n", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()

	b := ws.NewBatch()
	b.Write("exec.sh", "new\n", 0)
	b.Write("new/deep/file.txt", "deep\n", 0)
	b.Remove("gone.txt")
	b.Keep("kept.txt")
	b.Write("folder", "in the way\n", 0)
	b.Remove("never-was.txt")
	b.Write("restored.txt", "y\n", 0o600)
	b.Write("../outside.txt", "no\n", 0)
	res := b.Commit()
	if len(res) != 8 {
		t.Fatalf("%d results", len(res))
	}
	if again := b.Commit(); len(again) != 0 {
		t.Error("the batch is not empty after Commit")
	}
	for i, want := range []string{"", "", "", "", "is a folder", "", "", "outside"} {
		err := res[i].Err
		switch {
		case want == "" && i == 5:
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("removing a missing file = %v", err)
			}
		case want == "" && err != nil:
			t.Errorf("operation %d: %v", i, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("operation %d = %v, want %q", i, err, want)
		}
	}
	if !reflect.DeepEqual(res[1].CreatedDirs, []string{"new", "new/deep"}) {
		t.Errorf("created %v", res[1].CreatedDirs)
	}
	check := func(rel, content string, perm os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		data, err := os.ReadFile(p)
		info, _ := os.Stat(p)
		if err != nil || string(data) != content || info.Mode().Perm() != perm {
			t.Errorf("%s: %q %v %v, want %q %v", rel, data, info.Mode().Perm(), err, content, perm)
		}
	}
	check("exec.sh", "new\n", 0o755)
	check("new/deep/file.txt", "deep\n", 0o644)
	check("kept.txt", "as is\n", 0o644)
	check("restored.txt", "y\n", 0o600)
	if _, err := os.Stat(filepath.Join(dir, "gone.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("gone.txt is still there")
	}
	if info, err := os.Stat(filepath.Join(dir, "folder")); err != nil || !info.IsDir() {
		t.Error("the folder in the way was replaced")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "outside.txt")); err == nil {
		t.Error("a file was written outside the workspace")
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name()) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestBatchSymlinkLeadingOut: a write through a symlink that leads out of
// the workspace fails, and nothing outside changes.
func TestBatchSymlinkLeadingOut(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	b := ws.NewBatch()
	b.Write("out/evil.txt", "x\n", 0)
	if res := b.Commit(); res[0].Err == nil {
		t.Error("the write through the symlink succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the folder outside holds %v", entries)
	}
}

// With StopOn, a failure it accepts stops the batch there: the operations
// before it are made, none after it is (they fail with ErrNotDone), and no
// temporary file is left.
func TestBatchStopOn(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	b := ws.NewBatch()
	b.StopOn = func(err error) bool { return strings.Contains(err.Error(), "is a folder") }
	b.Write("first.txt", "1\n", 0)
	b.Write("folder", "in the way\n", 0)
	b.Write("after.txt", "2\n", 0)
	b.Remove("old.txt")
	res := b.Commit()
	if res[0].Err != nil || res[1].Err == nil || !errors.Is(res[2].Err, workspace.ErrNotDone) || !errors.Is(res[3].Err, workspace.ErrNotDone) {
		t.Fatalf("results %+v", res)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"first.txt", "folder", "old.txt"}; !reflect.DeepEqual(names, want) {
		t.Errorf("the workspace holds %v, want %v", names, want)
	}
}
