package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file whose name takes all 255 bytes a name may have is written, alone
// and in a batch, and a temporary file a crash left while writing it is
// cleaned, without touching another long name's.
func TestLongestNamesAreWritten(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	long := strings.Repeat("é", 127) + "x" // 255 bytes
	other := strings.Repeat("é", 127) + "y"
	if _, err := w.WriteFile(long, []byte("one")); err != nil {
		t.Fatalf("write a 255-byte name: %v", err)
	}
	b := w.NewBatch()
	b.Write(other, "two", 0)
	for _, res := range b.Commit() {
		if res.Err != nil {
			t.Fatalf("batch write of a 255-byte name: %v", res.Err)
		}
	}
	for name, want := range map[string]string{long: "one", other: "two"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%q: %q, %v", name[len(name)-3:], got, err)
		}
	}
	left := filepath.Join(dir, tempStem(long)+"123")
	kept := filepath.Join(dir, tempStem(other)+"456")
	for _, p := range []string{left, kept} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.CleanTemps(long); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the leftover of the long name is still there: %v", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("another name's temporary file was removed: %v", err)
	}
}
