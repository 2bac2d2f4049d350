package runner_test

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/runner"
)

// bigFile is a text of about 1 MB: 20,000 numbered lines.
func bigFile() string {
	var b strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, "line %05d of a large generated file, padded out...\n", i)
	}
	return b.String()
}

// manyEdits is a reply of 500 edits of big.txt, search/replace and
// line-range edits taking turns, so that every edit starts from a file
// version no earlier edit of the reply left behind.
func manyEdits() string {
	var b strings.Builder
	for k := 0; k < 250; k++ {
		fmt.Fprintf(&b, "[EDIT_FILE path=\"big.txt\"]\n<<<<<<< SEARCH\nline %05d of a large generated file, padded out...\n=======\nline %05d changed by search and replace\n>>>>>>> REPLACE\n[/EDIT_FILE]\n", k*40+1, k*40+1)
		line := k*40 + 20 + k
		fmt.Fprintf(&b, "[EDIT_FILE path=\"big.txt\" start_line=\"%d\" end_line=\"%d\"]\nreplaced line %d, first half\nreplaced line %d, second half\n[/EDIT_FILE]\n", line, line, line, line)
	}
	return b.String()
}

// dirSize adds up the sizes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestManyEditsJournalStaysSmall applies 500 edits of a 1 MB file in one
// reply. Each edit leaves a new 1 MB version of the file; courier's record
// of the turn must not keep them all, only what undo and recovery need:
// the file as it was before the reply, and the reply's commands.
func TestManyEditsJournalStaysSmall(t *testing.T) {
	f := newFixture(t)
	big := bigFile()
	f.writeWS("big.txt", big)
	id := f.create("many edits")
	reply := manyEdits()
	f.apply(id, "edits.txt", reply)
	ended := eventsOf[runner.TurnEnded](f.rec)
	if len(ended) != 1 {
		t.Fatalf("%d turns ended", len(ended))
	}
	for i, r := range ended[0].Results {
		if !r.Success() {
			t.Fatalf("edit %d: %s: %s", i, r.Status, r.Summary)
		}
	}
	after := f.readWS("big.txt")
	if strings.Count(after, "changed by search and replace") != 250 || strings.Count(after, "second half") != 250 {
		t.Fatalf("big.txt does not hold the 500 edits")
	}
	size := dirSize(t, f.store.Folder(id))
	t.Logf("file %d bytes, reply %d bytes, session records %d bytes", len(big), len(reply), size)
	if limit := int64(len(big)) + 4*int64(len(reply)) + 1<<20; size > limit {
		t.Errorf("the session's records take %d bytes after one reply of %d bytes editing a %d-byte file; want at most %d", size, len(reply), len(big), limit)
	}
	// Undo still restores the file as it was.
	if _, err := f.undo(id); err != nil {
		t.Fatal(err)
	}
	if f.readWS("big.txt") != big {
		t.Error("undo did not restore big.txt")
	}
}
