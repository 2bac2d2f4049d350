package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// writeAt creates dir/name with content and sets its modification time.
func writeAt(t *testing.T, dir, name, content string, mtime time.Time) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPending(t *testing.T) {
	base := time.Now().Add(-time.Hour)
	tests := []struct {
		name  string
		files map[string]time.Duration // name -> age offset from base
		want  []string
	}{
		{name: "empty folder", files: nil, want: nil},
		{
			name:  "oldest first",
			files: map[string]time.Duration{"c.txt": 3 * time.Second, "a.md": 2 * time.Second, "b.txt": time.Second},
			want:  []string{"b.txt", "a.md", "c.txt"},
		},
		{
			name:  "equal times by name",
			files: map[string]time.Duration{"b.txt": 0, "a.txt": 0, "c.txt": 0},
			want:  []string{"a.txt", "b.txt", "c.txt"},
		},
		{
			name: "temporary and hidden files ignored",
			files: map[string]time.Duration{
				"reply.txt": 0, ".reply.txt.swp": 0, "reply.txt.part": 0,
				"x.txt.tmp": 0, "x.txt~": 0, "#x.txt#": 0, "x.txt.crdownload": 0,
			},
			want: []string{"reply.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, off := range tt.files {
				writeAt(t, dir, name, "x", base.Add(off))
			}
			got, err := Pending(dir)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, name := range tt.want {
				want = append(want, filepath.Join(dir, name))
			}
			if !slices.Equal(got, want) {
				t.Errorf("Pending = %q, want %q", got, want)
			}
		})
	}
}

func TestPendingSkipsFoldersAndLinks(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	writeAt(t, dir, "reply.txt", "x", old)
	// A processed reply one level down must not be listed again.
	if err := os.MkdirAll(filepath.Join(dir, "processed"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeAt(t, filepath.Join(dir, "processed"), "done.txt", "x", old)
	if err := os.Mkdir(filepath.Join(dir, "folder.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	got, err := Pending(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "reply.txt")}
	if !slices.Equal(got, want) {
		t.Errorf("Pending = %q, want %q", got, want)
	}
}

func TestPendingMissingFolder(t *testing.T) {
	_, err := Pending(filepath.Join(t.TempDir(), "nope"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Pending error %v does not wrap fs.ErrNotExist", err)
	}
}

// BenchmarkPending shows the cost of one listing, which polling and the
// safety rescan pay every period, for an inbox with many processed-looking
// files left in it.
func BenchmarkPending(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		name := filepath.Join(dir, fmt.Sprintf("reply-%04d.txt", i))
		if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Pending(dir); err != nil {
			b.Fatal(err)
		}
	}
}
