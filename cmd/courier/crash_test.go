package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashReply is a long reply mixing every file command (including
// line-range edits, which are not idempotent: applying one twice inserts
// its lines twice) with commands that append to a log, so that doing
// anything twice shows.
func crashReply() string {
	var b strings.Builder
	b.WriteString("Session and sequence are not echoed; the reply goes to the only session.\n\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "[CREATE_FILE path=\"src/file%d.txt\"]\nfile %d line 1\nfile %d line 2\n[/CREATE_FILE]\n", i, i, i)
		fmt.Fprintf(&b, "[RUN_COMMAND]\necho run%d >> runs.log\n[/RUN_COMMAND]\n", i)
	}
	// Line-range edits of one file, each replacing one line with two; the
	// numbers refer to the file before the reply.
	for i := 1; i <= 10; i++ {
		line := i * 3
		fmt.Fprintf(&b, "[EDIT_FILE path=\"base.txt\" start_line=\"%d\" end_line=\"%d\"]\nedited %d a\nedited %d b\n[/EDIT_FILE]\n", line, line, line, line)
		if i%3 == 0 {
			fmt.Fprintf(&b, "[RUN_COMMAND]\necho edit-run%d >> runs.log\n[/RUN_COMMAND]\n", i)
		}
	}
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, "[EDIT_FILE path=\"src/file%d.txt\"]\n<<<<<<< SEARCH\nfile %d line 2\n=======\nfile %d line 2, changed\nfile %d line 3, added\n>>>>>>> REPLACE\n[/EDIT_FILE]\n", i, i, i, i)
	}
	b.WriteString("[DELETE_FILE path=\"src/file5.txt\"]\n")
	b.WriteString("[DELETE_FILE path=\"old.txt\"]\n")
	b.WriteString("[CREATE_FILE path=\"src/file6.txt\"]\nreplaced entirely\n[/CREATE_FILE]\n")
	b.WriteString("[READ_FILE path=\"base.txt\"]\n")
	b.WriteString("[RUN_COMMAND]\necho last >> runs.log\n[/RUN_COMMAND]\n")
	return b.String()
}

func baseText() string {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "base line %d\n", i)
	}
	return b.String()
}

// crashRoot prepares a root with one session waiting for the long reply.
func crashRoot(t *testing.T, courier string) (root, id string) {
	t.Helper()
	root = t.TempDir()
	ws := filepath.Join(root, "workspace")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "base.txt"), []byte(baseText()), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "old.txt"), []byte("old\n"), 0o644))
	out, err := exec.Command(courier, "--root", root, "new", "--no-watch", "crash test").CombinedOutput()
	if err != nil {
		t.Fatalf("courier new: %v\n%s", err, out)
	}
	id = strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "Session: ")
	must(t, os.WriteFile(filepath.Join(root, "inbox", "reply.txt"), []byte(crashReply()), 0o644))
	return root, id
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot reads a folder tree into a map of path to content.
func snapshot(t *testing.T, dir string, skip func(string) bool) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() || skip(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = string(data)
		return nil
	})
	must(t, err)
	return files
}

// TestCrash kills the real courier with SIGKILL at random moments while it
// applies a long reply, runs it again, and checks that the reply was
// applied exactly once: every file command once, no command run twice, one
// next outbox, a session file that loads, no temporary file left. Set
// COURIER_CRASH_ITERATIONS for a longer run (make crash-test).
func TestCrash(t *testing.T) {
	courier, err := exec.LookPath("courier")
	if err != nil {
		t.Fatalf("the courier test binary is not on PATH: %v", err)
	}
	iterations := 12
	if v := os.Getenv("COURIER_CRASH_ITERATIONS"); v != "" {
		iterations, err = strconv.Atoi(v)
		must(t, err)
	}

	// The reference: the same reply applied without interruption.
	refRoot, refID := crashRoot(t, courier)
	start := time.Now()
	if out, err := exec.Command(courier, "--root", refRoot, "process").CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	full := time.Since(start)
	noLog := func(p string) bool { return p == "runs.log" }
	want := snapshot(t, filepath.Join(refRoot, "workspace"), noLog)
	wantOutbox := strings.ReplaceAll(readOutbox(t, refRoot, refID, 2), refID, "SESSION")
	wantRuns := strings.Fields(mustRead(t, filepath.Join(refRoot, "workspace", "runs.log")))

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	killed := 0
	for it := 0; it < iterations; it++ {
		root, id := crashRoot(t, courier)
		cmd := exec.Command(courier, "--root", root, "process")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		must(t, cmd.Start())
		// Kill points spread over the whole run, from before the journal
		// begins to after the outbox is written.
		delay := time.Duration(rng.Int64N(int64(full) + int64(full)/4))
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(delay):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			killed++
		}
		// Recovery: the next process run finishes the turn.
		rec, err := exec.Command(courier, "--root", root, "process").CombinedOutput()
		if err != nil {
			t.Fatalf("iteration %d (kill after %s): recovery failed: %v\nfirst run:\n%s\nrecovery:\n%s", it, delay, err, out.String(), rec)
		}
		ctx := fmt.Sprintf("iteration %d (kill after %s of %s)\nfirst run:\n%s\nrecovery:\n%s", it, delay, full, out.String(), rec)
		checkCrashInvariants(t, ctx, root, id, want, wantOutbox, wantRuns)
	}
	t.Logf("%d iterations, %d killed mid-run (a full run takes %s)", iterations, killed, full)
}

func checkCrashInvariants(t *testing.T, ctx, root, id string, want map[string]string, wantOutbox string, wantRuns []string) {
	t.Helper()
	noLog := func(p string) bool { return p == "runs.log" }
	got := snapshot(t, filepath.Join(root, "workspace"), noLog)
	if d := treeDiff(got, want); d != "" {
		t.Fatalf("%s\nworkspace differs from a single application:\n%s", ctx, d)
	}
	// Each command ran at most once; all but one interrupted command ran.
	runs := strings.Fields(mustReadOr(filepath.Join(root, "workspace", "runs.log")))
	seen := map[string]int{}
	for _, r := range runs {
		seen[r]++
		if seen[r] > 1 {
			t.Fatalf("%s\ncommand %s ran twice: %v", ctx, r, runs)
		}
	}
	missing := 0
	for _, r := range wantRuns {
		if seen[r] == 0 {
			missing++
		}
	}
	state := loadState(t, ctx, root, id)
	interrupted := strings.Count(state.results, `"status":"interrupted"`)
	if missing > interrupted {
		t.Fatalf("%s\n%d commands never ran but only %d were reported interrupted: %v", ctx, missing, interrupted, runs)
	}
	if state.seq != 2 || state.complete {
		t.Fatalf("%s\nsession at sequence %d (complete %v), want 2", ctx, state.seq, state.complete)
	}
	// Exactly one next outbox, the same as without the crash except for
	// the interrupted commands' lines.
	entries, err := os.ReadDir(filepath.Join(root, "outbox"))
	must(t, err)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".txt") || strings.HasPrefix(e.Name(), ".courier-tmp-") {
			names = append(names, e.Name())
		}
	}
	if want := []string{id + "_seq0001.txt", id + "_seq0002.txt"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("%s\noutbox holds %v, want %v", ctx, names, want)
	}
	outbox := strings.ReplaceAll(readOutbox(t, root, id, 2), id, "SESSION")
	if interrupted == 0 && outbox != wantOutbox {
		t.Fatalf("%s\nnext outbox differs from an uninterrupted run:\n%s", ctx, outbox)
	}
	// The reply left the inbox for processed/, once.
	if _, err := os.Stat(filepath.Join(root, "inbox", "reply.txt")); err == nil {
		t.Fatalf("%s\nreply still in the inbox", ctx)
	}
	processed, _ := os.ReadDir(filepath.Join(root, "inbox", "processed"))
	if len(processed) != 1 {
		t.Fatalf("%s\ninbox/processed holds %d files, want 1", ctx, len(processed))
	}
	// No temporary file anywhere.
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".courier-tmp-") {
			t.Fatalf("%s\ntemporary file left: %s", ctx, p)
		}
		return nil
	})
}

// treeDiff describes how two snapshots differ, "" when they do not.
func treeDiff(got, want map[string]string) string {
	var b strings.Builder
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			fmt.Fprintf(&b, "missing %s\n", p)
		case g != w:
			fmt.Fprintf(&b, "%s is\n%s\nwant\n%s\n", p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			fmt.Fprintf(&b, "unexpected %s\n", p)
		}
	}
	return b.String()
}

type crashState struct {
	seq      int
	complete bool
	results  string
}

func loadState(t *testing.T, ctx, root, id string) crashState {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "sessions", id+".json"))
	must(t, err)
	var st struct {
		SequenceNumber int             `json:"sequenceNumber"`
		IsComplete     bool            `json:"isComplete"`
		LastResults    json.RawMessage `json:"lastResults"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("%s\nsession file does not load: %v", ctx, err)
	}
	var compact bytes.Buffer
	json.Compact(&compact, st.LastResults)
	return crashState{seq: st.SequenceNumber, complete: st.IsComplete, results: compact.String()}
}

func readOutbox(t *testing.T, root, id string, seq int) string {
	t.Helper()
	return mustRead(t, filepath.Join(root, "outbox", fmt.Sprintf("%s_seq%04d.txt", id, seq)))
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	must(t, err)
	return string(data)
}

func mustReadOr(p string) string {
	data, _ := os.ReadFile(p)
	return string(data)
}
