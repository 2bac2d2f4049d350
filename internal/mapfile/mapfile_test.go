package mapfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	dir := t.TempDir()
	for _, text := range []string{"", "one line\n", strings.Repeat("a long text\n", 100000)} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := String(p)
		if err != nil || got != text {
			t.Errorf("String of %d bytes = %d bytes, %v", len(text), len(got), err)
		}
		// The file replaced, as courier replaces a request, the string
		// keeps the old content.
		if err := os.WriteFile(p+".new", []byte("other"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p+".new", p); err != nil {
			t.Fatal(err)
		}
		if got != text {
			t.Errorf("the string changed with the file")
		}
	}
	if _, err := String(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("String of a missing file = %v", err)
	}
}
