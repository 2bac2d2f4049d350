package workspace

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A file the walk found, then swapped for a symlink to a secret outside
// the workspace or for a named pipe, is described without reading the
// secret (a NUL byte in it would mark the entry binary) or hanging; gone,
// it is dropped.
func TestDescribeSwappedEntries(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "id_rsa")
	for name, content := range map[string]string{"text.txt": "abc", "bin.dat": "a\x00b", secret: "secret\x00key"} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	type answer struct {
		found bool
		e     Entry
	}
	want := map[string]answer{
		"text.txt": {true, Entry{Path: "text.txt", Size: 3, Regular: true}},
		"bin.dat":  {true, Entry{Path: "bin.dat", Size: 3, Binary: true, Regular: true}},
		"link":     {true, Entry{Path: "link", Size: int64(len(secret))}},
		"pipe":     {true, Entry{Path: "pipe"}},
		"missing":  {false, Entry{Path: "missing", Regular: true}},
	}
	got := map[string]answer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, sniffSize)
		for name := range want {
			e := Entry{Path: name, Regular: true} // as the walk listed it
			found := describeAt(d, name, buf, &e)
			got[name] = answer{found, e}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("describing hung: a named pipe was opened waiting for a writer")
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: got %+v, want %+v", name, got[name], w)
		}
	}
}
