package atomicfile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// temps lists the temporary files in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if atomicfile.IsTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteReplacesContentAndMode(t *testing.T) {
	tests := []struct {
		name    string
		old     *string
		oldMode fs.FileMode
		data    string
		mode    fs.FileMode
	}{
		{name: "new file", data: "hello\n", mode: 0o644},
		{name: "replace and tighten", old: ptr("old content that is longer"), oldMode: 0o644, data: "new", mode: 0o600},
		{name: "replace and loosen", old: ptr("#!/bin/sh\n"), oldMode: 0o600, data: "#!/bin/sh\necho hi\n", mode: 0o755},
		{name: "empty", old: ptr("something"), oldMode: 0o644, data: "", mode: 0o644},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.txt")
			if tc.old != nil {
				if err := os.WriteFile(p, []byte(*tc.old), tc.oldMode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, tc.oldMode); err != nil {
					t.Fatal(err)
				}
			}
			if err := atomicfile.Write(p, []byte(tc.data), tc.mode); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != tc.data {
				t.Errorf("content %q, %v; want %q", got, err, tc.data)
			}
			info, _ := os.Stat(p)
			if info.Mode() != tc.mode {
				t.Errorf("mode %v, want %v", info.Mode(), tc.mode)
			}
			if left := temps(t, dir); len(left) > 0 {
				t.Errorf("temporary files left: %q", left)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestWriteFailsCleanly(t *testing.T) {
	tests := []struct {
		name   string
		target string // relative to the test folder
	}{
		// The temporary file cannot even be made.
		{name: "parent is a file", target: "file.txt/x"},
		{name: "parent missing", target: "nodir/x"},
		// The temporary file is made and written, then the rename fails.
		{name: "target is a folder", target: "sub"},
		{name: "target is a non-empty folder", target: "full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{"sub", "full"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "full", "x"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(dir, tc.target)
			err := atomicfile.Write(target, []byte("new"), 0o644)
			if err == nil {
				t.Fatal("write succeeded")
			}
			if !strings.Contains(err.Error(), target) {
				t.Errorf("error %q does not name %s", err, target)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "file.txt")); string(got) != "keep" {
				t.Errorf("file.txt = %q", got)
			}
			for _, d := range []string{dir, filepath.Join(dir, "sub"), filepath.Join(dir, "full")} {
				if left := temps(t, d); len(left) > 0 {
					t.Errorf("temporary files left in %s: %q", d, left)
				}
			}
			if info, err := os.Stat(filepath.Join(dir, "sub")); err != nil || !info.IsDir() {
				t.Errorf("folder sub damaged: %v", err)
			}
		})
	}
}

// TestWriteIsAtomicForReaders replaces a file over and over while another
// goroutine reads it: every read must see one whole version.
func TestWriteIsAtomicForReaders(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	versions := [][]byte{bytes.Repeat([]byte("A"), 64<<10), bytes.Repeat([]byte("B"), 100<<10)}
	if err := atomicfile.Write(p, versions[0], 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var reads int
	var bad []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			got, err := os.ReadFile(p)
			reads++
			if err != nil {
				bad = append(bad, err.Error())
				continue
			}
			if !bytes.Equal(got, versions[0]) && !bytes.Equal(got, versions[1]) {
				bad = append(bad, "mixed or partial content")
			}
		}
	}()
	for i := range 200 {
		if err := atomicfile.Write(p, versions[i%2], 0o644); err != nil {
			t.Error(err)
			break
		}
	}
	close(done)
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("%d of %d reads bad, first: %s", len(bad), reads, bad[0])
	}
}

func TestCleanTempsFor(t *testing.T) {
	names := []string{
		"a.json",
		".courier-tmp-a.json-111",
		".courier-tmp-a.json-222",
		".courier-tmp-ab.json-3",
		".courier-tmp-b.json-1",
		".courier-tmp-",
		"x.courier-tmp-a.json-1",
	}
	tests := []struct {
		base string
		left []string
	}{
		{base: "a.json", left: []string{".courier-tmp-", ".courier-tmp-ab.json-3", ".courier-tmp-b.json-1", "a.json", "x.courier-tmp-a.json-1"}},
		{base: "a", left: []string{".courier-tmp-", ".courier-tmp-b.json-1", "a.json", "x.courier-tmp-a.json-1"}},
		{base: "zzz", left: names},
		{base: "", left: []string{".courier-tmp-", "a.json", "x.courier-tmp-a.json-1"}},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := atomicfile.CleanTempsFor(dir, tc.base); err != nil {
			t.Fatal(err)
		}
		var left []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			left = append(left, e.Name())
		}
		want := append([]string(nil), tc.left...)
		sort.Strings(want)
		if !reflect.DeepEqual(left, want) {
			t.Errorf("CleanTempsFor(%q) left %q, want %q", tc.base, left, want)
		}
	}
	if err := atomicfile.CleanTemps(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CleanTemps of a missing folder = %v", err)
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".courier-tmp-a.json-1": true,
		".courier-tmp-x":        true,
		".courier-tmp-":         false,
		"a.json":                false,
		"x.courier-tmp-a":       false,
		".courier-tm":           false,
	} {
		if got := atomicfile.IsTemp(name); got != want {
			t.Errorf("IsTemp(%q) = %v", name, got)
		}
	}
}

func TestSyncDir(t *testing.T) {
	if err := atomicfile.SyncDir(t.TempDir()); err != nil {
		t.Errorf("SyncDir = %v", err)
	}
	if err := atomicfile.SyncDir(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncDir of a missing folder = %v", err)
	}
}

// TestSyncAll syncs many files at once and says which it could not.
func TestSyncAll(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := 0; i < 40; i++ {
		p := filepath.Join(dir, "f"+strings.Repeat("x", i))
		if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, p)
	}
	names = append(names, dir, filepath.Join(dir, "missing"))
	errs := atomicfile.SyncAll(names, os.Open)
	if len(errs) != len(names) {
		t.Fatalf("%d errors for %d names", len(errs), len(names))
	}
	for i, err := range errs[:len(errs)-1] {
		if err != nil {
			t.Errorf("sync %s: %v", names[i], err)
		}
	}
	if err := errs[len(errs)-1]; !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("sync of a missing file = %v", err)
	}
	if errs := atomicfile.SyncAll(nil, os.Open); len(errs) != 0 {
		t.Errorf("SyncAll of nothing = %v", errs)
	}
}

// TestFileInPieces writes a file in pieces: nothing new is seen under its
// name before Commit, and Abort leaves the old content and no temporary
// file.
func TestFileInPieces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "request.txt")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, commit := range []bool{false, true} {
		f, err := atomicfile.Create(p, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		for _, piece := range []string{"new ", "content"} {
			if _, err := f.Write([]byte(piece)); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); string(got) != "old" {
				t.Fatalf("before Commit the file holds %q", got)
			}
		}
		want := "old"
		if commit {
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
			want = "new content"
		} else {
			f.Abort()
		}
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("commit %v: file holds %q, want %q", commit, got, want)
		}
		if left := temps(t, dir); len(left) > 0 {
			t.Errorf("commit %v: temporary files left: %q", commit, left)
		}
	}
	if info, _ := os.Stat(p); info.Mode() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode())
	}
}

// TestCommitInOrder commits a request and the state that names it as a
// turn does: both are put in place, or, when one cannot be, the ones
// before it are and none after it is, with no temporary file left.
func TestCommitInOrder(t *testing.T) {
	for _, blocked := range []int{-1, 0, 1} {
		dir := t.TempDir()
		paths := []string{filepath.Join(dir, "outbox", "request.txt"), filepath.Join(dir, "sessions", "state.json")}
		for _, p := range paths {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if blocked >= 0 {
			// A folder that is not empty cannot be renamed over.
			p := paths[blocked]
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(p, "inside"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		var files []*atomicfile.File
		for i, p := range paths {
			// The request is not synced, the state is.
			stage := atomicfile.Stage
			if i == 0 {
				stage = atomicfile.StageUnsynced
			}
			f, err := stage(p, []byte("new"), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		err := atomicfile.CommitInOrder(files...)
		if (err != nil) != (blocked >= 0) {
			t.Errorf("blocked %d: error %v", blocked, err)
		}
		for i, p := range paths {
			want := "new"
			switch {
			case i == blocked:
				continue
			case blocked >= 0 && i > blocked:
				want = "old"
			}
			if got, _ := os.ReadFile(p); string(got) != want {
				t.Errorf("blocked %d: %s holds %q, want %q", blocked, p, got, want)
			}
			if left := temps(t, filepath.Dir(p)); len(left) > 0 {
				t.Errorf("blocked %d: temporary files left: %q", blocked, left)
			}
		}
	}
}
