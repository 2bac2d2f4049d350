package workspace_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/courier-agent/courier/internal/workspace"
)

func TestClean(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		outside bool
		err     bool
	}{
		{in: "a/b.txt", want: "a/b.txt"},
		{in: "./x", want: "x"},
		{in: "a/../b", want: "b"},
		{in: "a//b/", want: "a/b"},
		{in: ".", want: "."},
		{in: `a\b.txt`, want: "a/b.txt"},
		{in: "", err: true},
		{in: "/etc/passwd", outside: true},
		{in: "..", outside: true},
		{in: "../x", outside: true},
		{in: "a/../..", outside: true},
		{in: "a/../../x", outside: true},
		{in: `..\x`, outside: true},
		{in: `\abs`, outside: true},
		{in: "C:/x", outside: true},
		{in: `C:\Windows\x`, outside: true},
		{in: "c:x", outside: true},
	}
	for _, tc := range tests {
		got, err := workspace.Clean(tc.in)
		switch {
		case tc.outside:
			if !workspace.IsOutside(err) {
				t.Errorf("Clean(%q) = %q, %v; want an outside error", tc.in, got, err)
			}
		case tc.err:
			if err == nil || workspace.IsOutside(err) {
				t.Errorf("Clean(%q) = %q, %v; want a plain error", tc.in, got, err)
			}
		case err != nil || got != tc.want:
			t.Errorf("Clean(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestOutsideErrorNamesPathAsWritten(t *testing.T) {
	_, err := workspace.Clean("../secret")
	var oe *workspace.OutsideError
	if !errors.As(err, &oe) || oe.Path != "../secret" {
		t.Fatalf("err = %v, want an OutsideError for ../secret", err)
	}
	if want := "Path '../secret' is outside workspace"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

func TestWriteFileCreatesFoldersAndReportsThem(t *testing.T) {
	tests := []struct {
		name   string
		exists map[string]string
		path   string
		want   []string
	}{
		{name: "top level", path: "a.txt"},
		{name: "all missing", path: "a/b/c.txt", want: []string{"a", "a/b"}},
		{name: "outer exists", exists: map[string]string{"a/": ""}, path: "a/b/c.txt", want: []string{"a/b"}},
		{name: "all exist", exists: map[string]string{"a/b/": ""}, path: "a/b/c.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.exists)
			w := openWS(t, dir)
			created, err := w.WriteFile(tc.path, []byte("hello\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(created, tc.want) {
				t.Errorf("created %q, want %q", created, tc.want)
			}
			p := filepath.Join(dir, filepath.FromSlash(tc.path))
			if got := readFile(t, p); got != "hello\n" {
				t.Errorf("content %q", got)
			}
			info, _ := os.Stat(p)
			if info.Mode().Perm() != 0o644 {
				t.Errorf("new file mode %v, want 0644", info.Mode().Perm())
			}
			if left := tempFiles(t, dir); len(left) > 0 {
				t.Errorf("temporary files left: %q", left)
			}
		})
	}
}

func TestWriteFileKeepsModeOfExistingFile(t *testing.T) {
	for _, mode := range []fs.FileMode{0o755, 0o600, 0o640} {
		dir := t.TempDir()
		p := filepath.Join(dir, "run.sh")
		writeTree(t, dir, map[string]string{"run.sh": "old"})
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		w := openWS(t, dir)
		if _, err := w.WriteFile("run.sh", []byte("new")); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != mode || readFile(t, p) != "new" {
			t.Errorf("mode %v content %q, want %v and new", info.Mode().Perm(), readFile(t, p), mode)
		}
		if left := tempFiles(t, dir); len(left) > 0 {
			t.Errorf("temporary files left: %q", left)
		}
	}
}

func TestWriteFileRefusals(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"target.txt": "outside"})
	tests := []struct {
		name    string
		path    string
		outside bool
	}{
		{name: "existing folder", path: "dir"},
		{name: "workspace itself", path: "."},
		{name: "parent is a file", path: "file.txt/x"},
		{name: "absolute", path: "/tmp/x", outside: true},
		{name: "climbs out", path: "../x", outside: true},
		{name: "folder symlink leading out", path: "out/new.txt", outside: true},
		{name: "file symlink leading out", path: "evil.txt", outside: true},
		{name: "deeper through symlink leading out", path: "out/sub/new.txt", outside: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"dir/": "", "file.txt": "keep"})
			mustSymlink(t, outside, filepath.Join(dir, "out"))
			mustSymlink(t, filepath.Join(outside, "target.txt"), filepath.Join(dir, "evil.txt"))
			w := openWS(t, dir)
			_, err := w.WriteFile(tc.path, []byte("x"))
			if err == nil {
				t.Fatal("write succeeded")
			}
			if workspace.IsOutside(err) != tc.outside {
				t.Errorf("IsOutside(%v) = %v, want %v", err, !tc.outside, tc.outside)
			}
			if got := readFile(t, filepath.Join(outside, "target.txt")); got != "outside" {
				t.Errorf("file outside changed to %q", got)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Errorf("outside folder has %d entries, want 1", len(entries))
			}
			if got := readFile(t, filepath.Join(dir, "file.txt")); got != "keep" {
				t.Errorf("file.txt changed to %q", got)
			}
			if left := tempFiles(t, dir); len(left) > 0 {
				t.Errorf("temporary files left: %q", left)
			}
		})
	}
}

func TestWriteFileThroughSymlinkInside(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"real/": "", "notes.txt": "old"})
	mustSymlink(t, "real", filepath.Join(dir, "alias"))
	mustSymlink(t, "notes.txt", filepath.Join(dir, "notes-link"))
	w := openWS(t, dir)
	if _, err := w.WriteFile("alias/x.txt", []byte("via alias")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "real", "x.txt")); got != "via alias" {
		t.Errorf("real/x.txt = %q", got)
	}
	data, err := w.ReadFile("notes-link")
	if err != nil || string(data) != "old" {
		t.Errorf("ReadFile through inside link = %q, %v", data, err)
	}
}

func TestRemove(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"target.txt": "outside"})
	tests := []struct {
		name     string
		path     string
		wantErr  bool
		gone     string // file that must be gone afterwards
		survives string // file that must still be there
	}{
		{name: "file", path: "a.txt", gone: "a.txt", survives: "dir/b.txt"},
		{name: "folder is refused", path: "dir", wantErr: true, survives: "dir/b.txt"},
		{name: "symlink, not its target", path: "link", gone: "link", survives: "a.txt"},
		{name: "symlink leading out", path: "out-link", gone: "out-link"},
		{name: "missing", path: "nope.txt", wantErr: true, survives: "a.txt"},
		{name: "outside", path: "../x", wantErr: true, survives: "a.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"a.txt": "a", "dir/b.txt": "b"})
			mustSymlink(t, "a.txt", filepath.Join(dir, "link"))
			mustSymlink(t, filepath.Join(outside, "target.txt"), filepath.Join(dir, "out-link"))
			w := openWS(t, dir)
			err := w.Remove(tc.path)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Remove(%q) = %v, want error %v", tc.path, err, tc.wantErr)
			}
			if tc.gone != "" {
				if _, err := os.Lstat(filepath.Join(dir, tc.gone)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s still there", tc.gone)
				}
			}
			if tc.survives != "" {
				if _, err := os.Stat(filepath.Join(dir, tc.survives)); err != nil {
					t.Errorf("%s is gone: %v", tc.survives, err)
				}
			}
			if got := readFile(t, filepath.Join(outside, "target.txt")); got != "outside" {
				t.Errorf("outside file changed to %q", got)
			}
		})
	}
}

func TestReadsThroughEscapingSymlinksAreOutside(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "secret", "d/x.txt": "x"})
	dir := t.TempDir()
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "abs-link"))
	mustSymlink(t, "../"+filepath.Base(outside)+"/secret.txt", filepath.Join(dir, "rel-link"))
	mustSymlink(t, filepath.Join(outside, "d"), filepath.Join(dir, "dir-link"))
	w := openWS(t, dir)
	for _, p := range []string{"abs-link", "rel-link", "dir-link/x.txt", "dir-link"} {
		if data, err := w.ReadFile(p); !workspace.IsOutside(err) {
			t.Errorf("ReadFile(%q) = %q, %v; want outside", p, data, err)
		}
		if _, err := w.Stat(p); !workspace.IsOutside(err) {
			t.Errorf("Stat(%q) err = %v; want outside", p, err)
		}
	}
}

func TestReadStat(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a/b.txt": "bee", "empty/": ""})
	w := openWS(t, dir)
	if data, err := w.ReadFile("a/b.txt"); err != nil || string(data) != "bee" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	if _, err := w.ReadFile("a"); err == nil {
		t.Error("ReadFile of a folder succeeded")
	}
	if _, err := w.ReadFile("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) err = %v, want not exist", err)
	}
	if info, err := w.Stat("a/b.txt"); err != nil || info.Size() != 3 {
		t.Errorf("Stat = %v, %v", info, err)
	}
}

func TestMissingDirs(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a/": "", "f.txt": ""})
	w := openWS(t, dir)
	tests := []struct {
		path string
		want []string
	}{
		{path: "x.txt"},
		{path: "a/x.txt"},
		{path: "a/b/x.txt", want: []string{"a/b"}},
		{path: "n/m/o/x.txt", want: []string{"n", "n/m", "n/m/o"}},
	}
	for _, tc := range tests {
		got, err := w.MissingDirs(tc.path)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("MissingDirs(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	if _, err := w.MissingDirs("../x/y"); !workspace.IsOutside(err) {
		t.Errorf("MissingDirs outside err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "n")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("MissingDirs created a folder")
	}
}

func TestCleanTemps(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.txt":                      "a",
		".courier-tmp-a.txt-123":     "crash",
		".courier-tmp-a.txt-456":     "crash",
		".courier-tmp-a.txt.bak-789": "other file's",
		".courier-tmp-b.txt-1":       "other file's",
		"d/.courier-tmp-a.txt-9":     "other folder's",
	})
	w := openWS(t, dir)
	if err := w.CleanTemps("a.txt"); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range tempFiles(t, dir) {
		rel, _ := filepath.Rel(dir, p)
		left = append(left, filepath.ToSlash(rel))
	}
	want := []string{".courier-tmp-a.txt.bak-789", ".courier-tmp-b.txt-1", "d/.courier-tmp-a.txt-9"}
	if !reflect.DeepEqual(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	if err := w.CleanTemps("d/a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d", ".courier-tmp-a.txt-9")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("d's temporary file still there")
	}
	if err := w.CleanTemps("nodir/a.txt"); err != nil {
		t.Errorf("CleanTemps in a missing folder = %v", err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
