package workspace_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
	"github.com/courier-agent/courier/internal/workspace"
)

// ReadFile, which packs read with, reads what OpenRegular opens and
// refuses what it refuses, with the same errors: files deep in folders,
// symlinks into other folders and out of the workspace, named pipes,
// folders and missing files: a symlink to a secret outside is not read,
// and a named pipe does not hang.
func TestReadFileAnswersAsOpenRegular(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"top.txt": "top\n", "b/other.txt": "other\n"}
	for i := range 12 {
		files[fmt.Sprintf("a/d%d/e/f%d.go", i, i)] = fmt.Sprintf("package f%d\n", i)
	}
	writeTree(t, dir, files)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"a/sibling.txt": "../b/other.txt", "a/out.txt": outside, "a/d1/up": "../../b", "a/absolute.txt": filepath.Join(dir, "top.txt")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	sandboxtest.Mkfifo(t, filepath.Join(dir, "a/pipe"))
	ws := openWS(t, dir)
	paths := []string{"top.txt", "a/sibling.txt", "a/d1/up/other.txt", "a/out.txt", "a/absolute.txt", "a/pipe", "a", "a/missing.go", "../x", "a/d3/../../top.txt"}
	for p := range files {
		paths = append(paths, p)
	}
	// Into a buffer too small for most files, which must grow. Twice, so
	// the second round finds some folders held and others closed.
	buf := make([]byte, 2)
	readers := map[string]func(string, []byte) ([]byte, error){"ReadFile": func(p string, _ []byte) ([]byte, error) { return ws.ReadFile(p) }}
	// A read that opened the named pipe waiting for a writer would never
	// return: the reads run aside, and a hang fails the test.
	done := make(chan struct{})
	go func() {
		defer close(done)
		compareReads(t, ws, paths, readers, buf)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a read hung: a named pipe was opened waiting for a writer")
	}
	if got, err := ws.ReadFile("a/d7/e/f7.go"); string(got) != "package f7\n" || err != nil {
		t.Errorf("got %q, %v", got, err)
	}
}

// compareReads reads every path twice with each reader, into buf, and
// checks each answers as OpenRegular does.
func compareReads(t *testing.T, ws *workspace.Workspace, paths []string, readers map[string]func(string, []byte) ([]byte, error), buf []byte) {
	for range 2 {
		for _, p := range paths {
			want, wantErr := readVia(ws.OpenRegular, p)
			for name, read := range readers {
				data, err := read(p, buf)
				got := string(data)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || got != want {
					t.Errorf("%s: %s gave %q, %v; OpenRegular %q, %v", p, name, got, err, want, wantErr)
				}
				if p == "a/out.txt" && (wantErr == nil || got != "") {
					t.Errorf("%s: %s read outside the workspace: %q", p, name, got)
				}
			}
		}
	}
}

// readVia opens p with open and reads it whole.
func readVia(open func(string) (*os.File, os.FileInfo, error), p string) (string, error) {
	f, info, err := open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return "", errors.New("not regular")
	}
	data, err := io.ReadAll(f)
	return string(data), err
}
