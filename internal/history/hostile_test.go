package history

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// outsideDir is a folder outside the workspace holding a secret, as a
// command would like to read or overwrite.
func outsideDir(t *testing.T) (dir, listing0 string) {
	t.Helper()
	dir = t.TempDir()
	writeTree(t, dir, map[string]string{"secret.txt": "OUTSIDE-SECRET\n", "sub/a.txt": "outside a\n"})
	return dir, listing(t, dir)
}

// TestSymlinksOutAreNeverFollowed plants symlinks to a folder outside the
// workspace, replaces a source folder by one, and undoes it: the scan
// never reads the outside files, and the undo never writes there.
func TestSymlinksOutAreNeverFollowed(t *testing.T) {
	outside, outsideBefore := outsideDir(t)
	f := newFixture(t, Options{})
	f.write(map[string]string{"src/main.go": "package main\n", "src/util/u.go": "package util\n"})
	before := listing(t, f.dir)
	ch := f.command(1, `ln -s `+outside+`/secret.txt leak && ln -s / root && rm -rf src && ln -s `+outside+` src`)
	if sum := ch.Summary(10); !strings.Contains(sum, "src (folder → symlink, 2 files deleted)") || !strings.Contains(sum, "leak (new symlink to "+outside+"/secret.txt)") {
		t.Errorf("summary: %s", sum)
	}
	if storeHolds(t, f.h, "OUTSIDE-SECRET") {
		t.Fatal("the snapshot read a file outside the workspace through a symlink")
	}
	f.undo(1)
	sameTree(t, "workspace after undo", listing(t, f.dir), before)
	sameTree(t, "outside folder", listing(t, outside), outsideBefore)
}

// TestUndoDoesNotWriteThroughALaterSymlink: after a turn deleted a file,
// something replaces its folder by a symlink to a folder outside. Undo
// must not put the file back there.
func TestUndoDoesNotWriteThroughALaterSymlink(t *testing.T) {
	outside, outsideBefore := outsideDir(t)
	f := newFixture(t, Options{})
	f.write(map[string]string{"src/a.txt": "a\n", "src/keep.txt": "keep\n"})
	f.command(1, `rm src/a.txt`)
	f.sh(`mv src src.real && ln -s ` + outside + ` src`)
	rep := f.undo(1)
	sameTree(t, "outside folder", listing(t, outside), outsideBefore)
	if _, err := os.Stat(filepath.Join(outside, "a.txt")); err == nil {
		t.Fatal("undo wrote through the symlink")
	}
	if len(rep.NotUndone) != 1 || !strings.HasPrefix(rep.NotUndone[0], "src/a.txt (") {
		t.Errorf("not undone: %+v, want src/a.txt reported", rep.NotUndone)
	}
}

// TestSpecialFilesDoNotHangTheScan: a FIFO (even one replacing a file
// that was read before) and a socket created by a command are recorded,
// never opened for reading, and undone.
func TestSpecialFilesDoNotHangTheScan(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{"data.txt": "data\n"})
	before := listing(t, f.dir)
	done := make(chan Changes, 1)
	go func() {
		tr := f.turn(1)
		defer tr.Close()
		if err := tr.Before(nil); err != nil {
			t.Error(err)
		}
		f.sh(`rm data.txt && mkfifo data.txt && mkfifo pipe`)
		// A server the command left listening on a socket in the workspace.
		l, err := net.Listen("unix", filepath.Join(f.dir, "sock"))
		if err != nil {
			t.Error(err)
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
		ch, err := tr.After(0, nil)
		if err != nil {
			t.Error(err)
		}
		if _, err := tr.Finish(); err != nil {
			t.Error(err)
		}
		done <- ch
	}()
	select {
	case ch := <-done:
		sum := ch.Summary(10)
		for _, want := range []string{"data.txt (file → fifo)", "pipe (new fifo)", "sock (new socket)"} {
			if !strings.Contains(sum, want) {
				t.Errorf("summary %q lacks %q", sum, want)
			}
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the scan hung on a fifo")
	}
	f.undo(1)
	sameTree(t, "after undo", listing(t, f.dir), before)
}

// TestHugeSparseFile: a sparse file of 64 GB counts against the limit by
// its size, so it is not read: the scan stays quick and small, the turn
// says the file is not snapshotted, and undo still removes it. One that
// existed before the turn and is deleted or grown is reported as not
// undoable, with the reason, once.
func TestHugeSparseFile(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{"small.txt": "small\n"})
	f.sh(`truncate -s 70G old-huge.bin && truncate -s 65G grown-huge.bin`)
	start := time.Now()
	ch := f.command(1, `truncate -s 64G huge.bin && rm old-huge.bin && truncate -s 66G grown-huge.bin && echo changed > small.txt`)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the turn took %s: the sparse files were read", d)
	}
	sum := ch.Summary(10)
	for _, want := range []string{"huge.bin (new, 64.0 GB; past the turn's snapshot limit of 1 GB, so a later change cannot be undone)", "old-huge.bin (deleted; not undoable: past the turn's snapshot limit of 1 GB)", "small.txt (edited)",
		// Neither before nor after snapshotted: said once.
		"grown-huge.bin (edited; not undoable: past the turn's snapshot limit of 1 GB)"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
	if !lost(ch) {
		t.Error("the turn is not reported partly undoable")
	}
	rep := f.undo(1)
	if _, err := os.Lstat(filepath.Join(f.dir, "huge.bin")); err == nil {
		t.Error("undo left the sparse file the turn created")
	}
	if data, _ := os.ReadFile(filepath.Join(f.dir, "small.txt")); string(data) != "small\n" {
		t.Errorf("small.txt is %q after undo", data)
	}
	if len(rep.NotUndone) != 2 || !strings.HasPrefix(rep.NotUndone[0], "grown-huge.bin (") || !strings.HasPrefix(rep.NotUndone[1], "old-huge.bin (") {
		t.Errorf("not undone: %+v, want grown-huge.bin and old-huge.bin", rep.NotUndone)
	}
	var size int64
	for _, c := range storedContents(t, f.h) {
		size += int64(len(c))
	}
	if size > 1<<20 {
		t.Errorf("the store holds %d bytes", size)
	}
}

// TestTurnLimit: a turn that changes more than the limit records what it
// can and says plainly what is not undoable.
func TestTurnLimit(t *testing.T) {
	f := newFixture(t, Options{TurnLimit: 1 << 20})
	f.write(map[string]string{"keep.txt": "keep\n"})
	ch := f.command(1, `for i in 1 2 3; do head -c 600000 /dev/urandom > big$i.bin; done`)
	if len(ch.Skipped) != 2 {
		t.Fatalf("skipped %+v, want two of the three files over the 1 MB limit", ch.Skipped)
	}
	if strings.Count(ch.Summary(10), "; past the turn's snapshot limit of 1 MB, so a later change cannot be undone)") != 2 {
		t.Errorf("summary: %s", ch.Summary(10))
	}
	before := listing(t, f.dir)
	// The next turn overwrites all three: only one can come back, and
	// the result and the person's warning say which and why, once each.
	tr := f.turn(2)
	defer tr.Close()
	if err := tr.Before(nil); err != nil {
		t.Fatal(err)
	}
	f.sh(`for i in 1 2 3; do echo new > big$i.bin; done`)
	ch, err := tr.After(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "changed: big1.bin (edited), big2.bin (edited; not undoable: past the turn's snapshot limit of 1 MB), big3.bin (edited; not undoable: past the turn's snapshot limit of 1 MB)"
	if !lost(ch) || ch.Summary(10) != want {
		t.Errorf("summary:\n%s\nwant\n%s", ch.Summary(10), want)
	}
	warning := partlyUndoable(2, notUndoable(tr.Records, plan(tr.Records)))
	if want := "turn 2 is only partly undoable: big2.bin (past the turn's snapshot limit of 1 MB), big3.bin (past the turn's snapshot limit of 1 MB)"; warning != want {
		t.Errorf("warning:\n%s\nwant\n%s", warning, want)
	}
	if _, err := tr.Finish(); err != nil {
		t.Fatal(err)
	}
	// 'courier log' reads the same from the turn's records.
	turns, err := f.store.Log(&State{SessionID: f.id, SequenceNumber: 3})
	if err != nil || len(turns) != 2 || len(turns[1].Changes) != 1 || turns[1].Changes[0].Changed != want {
		t.Errorf("recorded changes: %+v, %v", turns, err)
	}
	rep := f.undo(2)
	if len(rep.Restored) != 1 || len(rep.NotUndone) != 2 {
		t.Errorf("restored %v, not undone %v", rep.Restored, rep.NotUndone)
	}
	got := listing(t, f.dir)
	if !strings.Contains(before, strings.Split(got, "\n")[1]) {
		t.Errorf("the restored file differs: %s", got)
	}
}

// TestIgnoredPathsStayOut: paths .gitignore leaves out are not
// snapshotted, and a command changing them is reported as such, even
// when the command first deletes .gitignore or ignores everything.
func TestIgnoredPathsStayOut(t *testing.T) {
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, Options{})
		f.write(map[string]string{
			".gitignore":                 "node_modules/\nbuild/\n*.log\n",
			"node_modules/pkg/index.js":  "IGNORED-DEPENDENCY\n",
			"build/out.bin":              "IGNORED-BUILD\n",
			"app.log":                    "IGNORED-LOG\n",
			"src/main.js":                "tracked\n",
			"src/deep/lib.js":            "tracked too\n",
			".git/HEAD":                  "ref: refs/heads/main\n",
			".git/info/exclude":          "*.tmp\n",
			".git/objects/ab/cdef012345": "GIT-OBJECT\n",
		})
		return f
	}
	t.Run("changes reported, not stored", func(t *testing.T) {
		f := setup(t)
		ch := f.command(1, `rm -rf node_modules build && mkdir -p node_modules/x && echo NEW-IGNORED > node_modules/x/y.js && echo log > new.log && echo x > src/new.js`)
		sum := ch.Summary(10)
		for _, want := range []string{"node_modules/ (ignored, not undoable)", "build/ (ignored, not undoable)", "new.log (ignored, not undoable)", "src/new.js (new"} {
			if !strings.Contains(sum, want) {
				t.Errorf("summary %q lacks %q", sum, want)
			}
		}
		for _, marker := range []string{"IGNORED-DEPENDENCY", "IGNORED-BUILD", "IGNORED-LOG", "NEW-IGNORED"} {
			if storeHolds(t, f.h, marker) {
				t.Errorf("the store holds ignored content %s", marker)
			}
		}
		if !storeHolds(t, f.h, "GIT-OBJECT") {
			t.Error(".git was not snapshotted")
		}
		rep := f.undo(1)
		if s := rep.Notice(); !strings.Contains(s, "Not undone: build (ignored by .gitignore") || !strings.Contains(s, "node_modules (ignored by .gitignore") {
			t.Errorf("undo notice: %s", s)
		}
		if _, err := os.Stat(filepath.Join(f.dir, "src/new.js")); err == nil {
			t.Error("undo left src/new.js")
		}
	})
	for _, attack := range []string{
		`rm .gitignore && rm -rf src .git`,
		`echo '*' > .gitignore && rm -rf src .git`,
	} {
		t.Run(attack, func(t *testing.T) {
			f := setup(t)
			before := listing(t, f.dir)
			ch := f.command(1, attack)
			if storeHolds(t, f.h, "IGNORED-DEPENDENCY") {
				t.Error("deleting .gitignore pulled node_modules into the snapshot")
			}
			if !strings.Contains(ch.Summary(10), "src/ (3 files deleted)") && !strings.Contains(ch.Summary(10), "src/ (2 files deleted)") {
				t.Errorf("summary: %s", ch.Summary(10))
			}
			f.undo(1)
			sameTree(t, "after undo", listing(t, f.dir), before)
		})
	}
}

// TestSettingsExcludeAndInclude: the exclusion setting keeps paths out,
// the inclusion setting brings paths .gitignore leaves out back in, even
// inside an ignored folder.
func TestSettingsExcludeAndInclude(t *testing.T) {
	f := newFixture(t, Options{Exclude: []string{"data/", "*.secret"}, Include: []string{"node_modules/local-pkg/", ".env"}})
	f.write(map[string]string{
		".gitignore":                    "node_modules/\n.env\n",
		"data/big.csv":                  "EXCLUDED-DATA\n",
		"key.secret":                    "EXCLUDED-KEY\n",
		".env":                          "INCLUDED-ENV\n",
		"node_modules/local-pkg/a.js":   "INCLUDED-PKG\n",
		"node_modules/other/b.js":       "IGNORED-OTHER\n",
		"node_modules/local-pkg/sub/c.": "INCLUDED-DEEP\n",
	})
	before := listing(t, f.dir)
	ch := f.command(1, `rm -rf node_modules/local-pkg .env data key.secret`)
	for _, m := range []string{"INCLUDED-ENV", "INCLUDED-PKG", "INCLUDED-DEEP"} {
		if !storeHolds(t, f.h, m) {
			t.Errorf("%s was not snapshotted", m)
		}
	}
	for _, m := range []string{"EXCLUDED-DATA", "EXCLUDED-KEY", "IGNORED-OTHER"} {
		if storeHolds(t, f.h, m) {
			t.Errorf("%s was snapshotted", m)
		}
	}
	if strings.Contains(ch.Summary(20), "data") {
		t.Errorf("an excluded path is reported: %s", ch.Summary(20))
	}
	f.undo(1)
	got := listing(t, f.dir)
	for _, l := range strings.Split(before, "\n") {
		if !strings.Contains(l, "data") && !strings.Contains(l, "key.secret") && !strings.Contains(got, l) {
			t.Errorf("missing after undo: %s", l)
		}
	}
}

// TestCourierFoldersInsideTheWorkspace: with the workspace set to
// courier's root, the store, inbox and outbox lie inside it; snapshots
// leave them out and undo does not touch them.
func TestCourierFoldersInsideTheWorkspace(t *testing.T) {
	f := &fixture{t: t, dir: t.TempDir(), id: "abcd1234"}
	f.store = Store{Dir: filepath.Join(f.dir, "sessions")}
	f.write(map[string]string{"main.go": "package main\n", "inbox/reply.txt": "reply\n", "outbox/req.txt": "req\n"})
	f.open(Options{Private: []string{filepath.Join(f.dir, "inbox"), filepath.Join(f.dir, "outbox"), filepath.Join(f.dir, "sessions")}})
	ch := f.command(1, `echo changed > main.go && echo new > inbox/next.txt && echo more >> outbox/req.txt`)
	if sum := ch.Summary(10); sum != "changed: main.go (edited)" {
		t.Errorf("summary: %s", sum)
	}
	if storeHolds(t, f.h, "reply\n") || storeHolds(t, f.h, "req\n") {
		t.Error("courier's own folders were snapshotted")
	}
	f.write(map[string]string{"outbox/req2.txt": "after\n"})
	f.undo(1)
	for p, want := range map[string]string{"main.go": "package main\n", "inbox/next.txt": "new\n", "outbox/req.txt": "req\nmore\n", "outbox/req2.txt": "after\n"} {
		if data, _ := os.ReadFile(filepath.Join(f.dir, p)); string(data) != want {
			t.Errorf("%s is %q after undo, want %q", p, data, want)
		}
	}
}

// hideScript empties a folder and a file and makes them unreadable, to
// hide from an ordinary user's scan what it did there.
const hideScript = `rm -rf secret/* && chmod 000 secret && echo changed > locked.txt && chmod 000 locked.txt`

// hideAndUndo records hideScript as a turn and undoes it, printing what
// the turn changed and what undo did (it runs in a child process under an
// ordinary account).
func hideAndUndo(h *History, dir string) error {
	t, err := h.Turn(1)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.Before(nil); err != nil {
		return err
	}
	cmd := exec.Command("sh", "-c", hideScript)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	ch, err := t.After(0, nil)
	if err != nil {
		return err
	}
	if _, err := t.Finish(); err != nil {
		return err
	}
	rep, err := h.Undo(1)
	if err != nil {
		return err
	}
	fmt.Printf("%s\n%s\n", ch.Summary(10), rep.Notice())
	return nil
}
