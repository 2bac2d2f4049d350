package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/procgroup"
	"github.com/courier-agent/courier/internal/workspace"
)

// The crash tests run the recording and the undo in a child process (this
// test binary, started again with crashChildVar set), kill it with
// SIGKILL at a random moment, and let the parent finish the job the way
// the next courier run would. Set COURIER_CRASH_ITERATIONS for a longer
// run.

const crashChildVar = "SNAPSHOT_CRASH_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(lockChildEnv); spec != "" {
		os.Exit(holdLock(spec))
	}
	if mode := os.Getenv(crashChildVar); mode != "" {
		if err := crashChild(mode, os.Getenv("SNAPSHOT_WS"), os.Getenv("SNAPSHOT_STORE"), os.Getenv("SNAPSHOT_MARK")); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashScript is the command of the crash turn: it deletes a tree,
// rewrites files, creates many, changes modes and kinds.
const crashScript = `rm -rf src/a && for f in src/b/*; do echo rewritten >> "$f"; done &&
mkdir -p gen && awk 'BEGIN { for (i = 0; i < 400; i++) { f = "gen/f" i; print i > f; close(f) } }' &&
chmod 600 src/c/* && rm src/c/f0 && ln -s elsewhere src/c/f0 && rm -rf src/d && echo file > src/d`

// crashChild is the courier run that gets killed.
func crashChild(mode, dir, sessions, mark string) error {
	ws, err := workspace.Open(dir)
	if err != nil {
		return err
	}
	h, err := Store{Dir: sessions}.Open("0000000a", ws, Options{})
	if err != nil {
		return err
	}
	switch mode {
	case "undo":
		_, err := h.Undo(1)
		return err
	case "hide":
		return hideAndUndo(h, dir)
	case "pack":
		// The session's first snapshot, then the turn.
		if err := h.Refresh(); err != nil {
			return err
		}
	}
	return recordCrashTurn(h, dir, mark)
}

// recordCrashTurn records the crash turn, or finishes it after a crash, as
// the engine does: a command whose start record is there is not run again,
// and what it changed, all or part, is recorded.
func recordCrashTurn(h *History, dir, mark string) error {
	t, err := h.Turn(1)
	if err != nil {
		return err
	}
	defer t.Close()
	if _, ok := t.Begun(); !ok {
		if err := t.Add(Record{Kind: RecordBegin, Commands: []command.Command{{Type: command.RunCommand, Command: "sh"}}}); err != nil {
			return err
		}
	}
	if !t.Has(RecordStart) {
		if err := t.Before(nil); err != nil {
			return err
		}
		if err := t.Append(Record{Kind: RecordStart}); err != nil {
			return err
		}
		cmd := exec.Command("sh", "-c", crashScript)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
	}
	if _, err := t.After(0, nil); err != nil {
		return err
	}
	_, err = t.Finish()
	return err
}

func crashTree(t *testing.T, f *fixture) {
	t.Helper()
	files := map[string]string{"README": "readme\n"}
	for _, d := range []string{"a", "b", "c", "d"} {
		for i := 0; i < 60; i++ {
			files[fmt.Sprintf("src/%s/f%d", d, i)] = fmt.Sprintf("%s %d\n", d, i)
		}
	}
	f.write(files)
}

// runChild starts a child and kills its whole process group (the child
// and the command it runs, as courier's recovery stops what a crashed
// run left) after delay, or lets it finish. It returns whether it killed.
func runChild(t *testing.T, f *fixture, mode, mark string, delay time.Duration) (bool, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildVar+"="+mode, "SNAPSHOT_WS="+f.dir, "SNAPSHOT_STORE="+f.store.Dir, "SNAPSHOT_MARK="+mark)
	cmd.SysProcAttr = procgroup.Attr()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("child %s: %v\n%s", mode, err, out.String())
		}
		return false, out.String()
	case <-time.After(delay):
		procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return true, out.String()
	}
}

func crashIterations(t *testing.T) int {
	n := 5
	if v := os.Getenv("COURIER_CRASH_ITERATIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestCrashWhileRecording kills courier at random moments while it
// snapshots, runs the command and records its changes; the next run
// finishes the turn, and undo must give back exactly the tree before it.
func TestCrashWhileRecording(t *testing.T) {
	full := time.Duration(1 << 62)
	for range 3 {
		ref := newFixture(t, Options{})
		crashTree(t, ref)
		start := time.Now()
		runChild(t, ref, "turn", filepath.Join(t.TempDir(), "mark"), time.Hour)
		full = min(full, time.Since(start))
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	killed := 0
	for it := 0; it < crashIterations(t); it++ {
		f := newFixture(t, Options{})
		crashTree(t, f)
		before := listing(t, f.dir)
		mark := filepath.Join(t.TempDir(), "mark")
		delay := time.Duration(rng.Int64N(int64(full) * 5 / 4))
		if k, _ := runChild(t, f, "turn", mark, delay); k {
			killed++
		}
		f.open(Options{})
		if err := recordCrashTurn(f.h, f.dir, mark); err != nil {
			t.Fatalf("iteration %d (kill after %s of %s): recovery: %v", it, delay, full, err)
		}
		rep := f.undo(1)
		sameTree(t, fmt.Sprintf("iteration %d (kill after %s of %s)", it, delay, full), listing(t, f.dir), before)
		if len(rep.Kept) > 0 || len(rep.NotUndone) > 0 {
			t.Fatalf("iteration %d: undo reported %s", it, rep.Notice())
		}
	}
	t.Logf("%d iterations, %d killed mid-run (a full run takes %s)", crashIterations(t), killed, full)
}

// TestCrashWhileUndoing kills courier at random moments during an undo;
// the next run finishes it: the tree is exactly the one before the turn,
// and nothing was set aside (a step done twice would have set aside its
// own work).
func TestCrashWhileUndoing(t *testing.T) {
	setup := func() (*fixture, string) {
		f := newFixture(t, Options{})
		crashTree(t, f)
		before := listing(t, f.dir)
		if err := recordCrashTurn(f.h, f.dir, filepath.Join(t.TempDir(), "mark")); err != nil {
			t.Fatal(err)
		}
		return f, before
	}
	full := time.Duration(1 << 62)
	for range 3 {
		ref, _ := setup()
		start := time.Now()
		runChild(t, ref, "undo", "", time.Hour)
		full = min(full, time.Since(start))
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	midUndo := 0
	for it := 0; it < crashIterations(t); it++ {
		f, before := setup()
		delay := time.Duration(rng.Int64N(int64(full) * 5 / 4))
		k, _ := runChild(t, f, "undo", "", delay)
		f.open(Options{})
		rep := f.undo(1)
		ctx := fmt.Sprintf("iteration %d (kill after %s of %s)", it, delay, full)
		sameTree(t, ctx, listing(t, f.dir), before)
		if len(rep.Kept) > 0 || len(rep.NotUndone) > 0 {
			t.Fatalf("%s: undo reported %s", ctx, rep.Notice())
		}
		if again := f.undo(1); again.Notice() != rep.Notice() {
			t.Fatalf("%s: undo ran twice: %s then %s", ctx, rep.Notice(), again.Notice())
		}
		if k {
			midUndo++
		}
	}
	t.Logf("%d iterations, %d killed mid-undo (a full run takes %s)", crashIterations(t), midUndo, full)
}

// TestReaderLeavesTempFilesAlone: opening the store to read it ('courier
// log' or 'diff' while 'courier watch' records a turn) leaves the
// temporary files of the writer alone; the next run that changes the
// store removes what a crash left.
func TestReaderLeavesTempFilesAlone(t *testing.T) {
	f := newFixture(t, Options{})
	tmp := filepath.Join(f.folder(), "objects", ".courier-tmp-pack-123")
	writeTree(t, filepath.Dir(tmp), map[string]string{filepath.Base(tmp): "half a pack"})
	reader, err := f.store.Open(f.id, f.ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Log(&State{SessionID: f.id, SequenceNumber: 1}); err != nil {
		t.Fatal(err)
	}
	reader.Close()
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("a reader removed a writer's temporary file: %v", err)
	}
	f.command(1, `echo x > x`)
	if _, err := os.Stat(tmp); err == nil {
		t.Fatal("the temporary file a crash left is still there after a turn")
	}
}
