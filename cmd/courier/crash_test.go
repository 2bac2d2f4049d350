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
	"regexp"
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

// bigText is a file of n numbered lines of about 50 bytes.
func bigText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %05d of a large generated file, padded out...\n", i)
	}
	return b.String()
}

// manyEditsReply edits big.txt n times, search/replace and line-range edits
// taking turns, so every edit starts from a version no earlier edit of the
// reply left behind, and the line-range edits would do damage if made
// twice.
func manyEditsReply(n int) string {
	var b strings.Builder
	for k := 0; k < n/2; k++ {
		fmt.Fprintf(&b, "[EDIT_FILE path=\"big.txt\"]\n<<<<<<< SEARCH\nline %05d of a large generated file, padded out...\n=======\nline %05d changed by search and replace\n>>>>>>> REPLACE\n[/EDIT_FILE]\n", k*20+1, k*20+1)
		line := k*20 + 10 + k
		fmt.Fprintf(&b, "[EDIT_FILE path=\"big.txt\" start_line=\"%d\" end_line=\"%d\"]\nreplaced line %d, first half\nreplaced line %d, second half\n[/EDIT_FILE]\n", line, line, line, line)
	}
	return b.String()
}

// largeBodiesReply carries bodies large enough to be kept apart from the
// turn's record (a resumed turn reads them back from the content store).
func largeBodiesReply() string {
	return "[CREATE_FILE path=\"new1.txt\"]\n" + bigText(3000) + "[/CREATE_FILE]\n" +
		"[RUN_COMMAND]\necho run1 >> runs.log\n[/RUN_COMMAND]\n" +
		"[EDIT_FILE path=\"big.txt\" start_line=\"10\" end_line=\"20\"]\n" + strings.ReplaceAll(bigText(2000), "line", "LINE") + "[/EDIT_FILE]\n" +
		"[RUN_COMMAND]\necho run2 >> runs.log\n[/RUN_COMMAND]\n" +
		"[EDIT_FILE path=\"big.txt\" start_line=\"30\" end_line=\"30\"]\none line\n[/EDIT_FILE]\n" +
		"[CREATE_FILE path=\"new2.txt\"]\n" + strings.ReplaceAll(bigText(3000), "large", "LARGE") + "[/CREATE_FILE]\n" +
		"[RUN_COMMAND]\necho run3 >> runs.log\n[/RUN_COMMAND]\n"
}

// crashScenario is a reply applied under kill -9, and the workspace it
// starts from.
type crashScenario struct {
	name       string
	files      map[string]string
	reply      string
	iterations int
}

// crashRoot prepares a root with one session waiting for the scenario's
// reply.
func crashRoot(t *testing.T, courier string, sc crashScenario) (root, id string) {
	t.Helper()
	root = t.TempDir()
	ws := filepath.Join(root, "workspace")
	for rel, content := range sc.files {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	must(t, os.MkdirAll(ws, 0o755))
	out, err := exec.Command(courier, "--root", root, "new", "--no-watch", "crash test").CombinedOutput()
	if err != nil {
		t.Fatalf("courier new: %v\n%s", err, out)
	}
	id = sessionOf(t, out)
	must(t, os.WriteFile(filepath.Join(root, "inbox", "reply.txt"), []byte(sc.reply), 0o644))
	return root, id
}

// sessionOf is the id 'courier new' printed on its "Session: " line,
// wherever a warning on stderr put that line.
func sessionOf(t *testing.T, out []byte) string {
	t.Helper()
	for _, line := range strings.Split(string(out), "\n") {
		if id, ok := strings.CutPrefix(line, "Session: "); ok {
			return id
		}
	}
	t.Fatalf("courier new printed no session:\n%s", out)
	return ""
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

// crashIterations is how many kill points a crash test tries:
// COURIER_CRASH_ITERATIONS when set (make crash-test), else n.
func crashIterations(t *testing.T, n int) int {
	if v := os.Getenv("COURIER_CRASH_ITERATIONS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		must(t, err)
	}
	return n
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
	for _, sc := range []crashScenario{
		{name: "mixed reply", files: map[string]string{"base.txt": baseText(), "old.txt": "old\n"}, reply: crashReply(), iterations: 12},
		{name: "many edits of a large file", files: map[string]string{"big.txt": bigText(4000)}, reply: manyEditsReply(100), iterations: 6},
		{name: "large bodies", files: map[string]string{"big.txt": bigText(4000)}, reply: largeBodiesReply(), iterations: 6},
	} {
		t.Run(sc.name, func(t *testing.T) { crashTurn(t, courier, sc) })
	}
}

func crashTurn(t *testing.T, courier string, sc crashScenario) {
	iterations := crashIterations(t, sc.iterations)
	// The reference: the same reply applied without interruption.
	refRoot, refID := crashRoot(t, courier, sc)
	start := time.Now()
	if out, err := exec.Command(courier, "--root", refRoot, "process").CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	full := time.Since(start)
	noLog := func(p string) bool { return p == "runs.log" }
	want := snapshot(t, filepath.Join(refRoot, "workspace"), noLog)
	wantOutbox := strings.ReplaceAll(readOutbox(t, refRoot, refID, 2), refID, "SESSION")
	wantRuns := strings.Fields(mustReadOr(filepath.Join(refRoot, "workspace", "runs.log")))

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	killed := 0
	for it := 0; it < iterations; it++ {
		root, id := crashRoot(t, courier, sc)
		out, delay, wasKilled := runKilled(t, rng, full, courier, "--root", root, "process")
		if wasKilled {
			killed++
		}
		// Recovery: the next process run finishes the turn.
		rec, err := exec.Command(courier, "--root", root, "process").CombinedOutput()
		if err != nil {
			t.Fatalf("iteration %d (kill after %s): recovery failed: %v\nfirst run:\n%s\nrecovery:\n%s", it, delay, err, out, rec)
		}
		ctx := fmt.Sprintf("iteration %d (kill after %s of %s)\nfirst run:\n%s\nrecovery:\n%s", it, delay, full, out, rec)
		checkCrashInvariants(t, ctx, root, id, want, wantOutbox, wantRuns)
	}
	t.Logf("%d iterations, %d killed mid-run (a full run takes %s)", iterations, killed, full)
}

// runKilled runs courier and sends it SIGKILL at a random moment within a
// quarter more than full (the time an uninterrupted run takes), unless it
// ends first: kill points spread over the whole run, from before anything
// is journaled to after the commit. It returns the output, the moment and
// whether the kill came first.
func runKilled(t *testing.T, rng *rand.Rand, full time.Duration, courier string, args ...string) (string, time.Duration, bool) {
	t.Helper()
	cmd := exec.Command(courier, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	delay := time.Duration(rng.Int64N(int64(full) + int64(full)/4))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return out.String(), delay, false
	case <-time.After(delay):
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return out.String(), delay, true
	}
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
	undoing  bool
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
		Undoing        json.RawMessage `json:"undoing"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("%s\nsession file does not load: %v", ctx, err)
	}
	var compact bytes.Buffer
	json.Compact(&compact, st.LastResults)
	return crashState{seq: st.SequenceNumber, complete: st.IsComplete, undoing: st.Undoing != nil, results: compact.String()}
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

// undoReplies are the two turns of the undo crash test: the second changes
// many files in many folders, so that undoing it takes a while.
func undoReplies() (first, second string) {
	var a, b strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&a, "[CREATE_FILE path=\"pkg%d/a.txt\"]\nfirst %d\n[/CREATE_FILE]\n", i%4, i)
		fmt.Fprintf(&a, "[CREATE_FILE path=\"pkg%d/f%d.txt\"]\nfile %d\nline 2\nline 3\n[/CREATE_FILE]\n", i%4, i, i)
	}
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "[EDIT_FILE path=\"pkg%d/f%d.txt\" start_line=\"2\" end_line=\"2\"]\nsecond %d\nand more\n[/EDIT_FILE]\n", i%4, i, i)
		fmt.Fprintf(&b, "[CREATE_FILE path=\"new%d/deep/n%d.txt\"]\nnew %d\n[/CREATE_FILE]\n", i%3, i, i)
	}
	b.WriteString("[DELETE_FILE path=\"base.txt\"]\n[EDIT_FILE path=\"pkg2/f2.txt\"]\n<<<<<<< SEARCH\nfile 2\n=======\nFILE 2\n>>>>>>> REPLACE\n[/EDIT_FILE]\n")
	return a.String(), b.String()
}

// TestCrashUndo kills 'courier undo' with SIGKILL at random moments, lets
// the next courier run recover, and checks that exactly one turn was
// undone: the workspace is as after the first turn (a file changed by hand
// since is kept aside, once), the session is one request further with the
// notice, and the next undo takes back the first turn.
func TestCrashUndo(t *testing.T) {
	courier, err := exec.LookPath("courier")
	if err != nil {
		t.Fatalf("the courier test binary is not on PATH: %v", err)
	}
	iterations := crashIterations(t, 12)
	base := t.TempDir()
	tmpl := filepath.Join(base, "template")
	id := prepareUndo(t, courier, tmpl)
	all := func(string) bool { return false }
	wantAfterUndo := snapshot(t, filepath.Join(base, "after-first"), all)
	wantOriginal := map[string]string{"base.txt": baseText()}

	// The reference: an undo without interruption, timed.
	ref := copyRoot(t, tmpl, filepath.Join(base, "reference"), id)
	start := time.Now()
	if out, err := exec.Command(courier, "--root", ref, "undo").CombinedOutput(); err != nil {
		t.Fatalf("reference undo: %v\n%s", err, out)
	}
	full := time.Since(start)

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	killed := 0
	for it := 0; it < iterations; it++ {
		root := copyRoot(t, tmpl, filepath.Join(base, fmt.Sprintf("run%d", it)), id)
		out, delay, wasKilled := runKilled(t, rng, full, courier, "--root", root, "undo")
		if wasKilled {
			killed++
		}
		ctx := fmt.Sprintf("iteration %d (kill after %s of %s)\nundo:\n%s", it, delay, full, out)
		// Recovery: the next run that takes the session finishes the undo.
		rec, err := exec.Command(courier, "--root", root, "process").CombinedOutput()
		ctx += fmt.Sprintf("\nrecovery:\n%s", rec)
		if err != nil {
			t.Fatalf("%s\nrecovery failed: %v", ctx, err)
		}
		if st := loadState(t, ctx, root, id); st.seq == 3 {
			// Killed before the undo began: nothing changed, and the person
			// runs it again.
			if d := treeDiff(snapshot(t, filepath.Join(root, "workspace"), all), snapshot(t, filepath.Join(tmpl, "workspace"), all)); d != "" {
				t.Fatalf("%s\nthe undo did not begin, yet the workspace changed:\n%s", ctx, d)
			}
			again, err := exec.Command(courier, "--root", root, "undo").CombinedOutput()
			if err != nil {
				t.Fatalf("%s\nundo again: %v\n%s", ctx, err, again)
			}
		}
		checkUndoneOnce(t, ctx, root, id, wantAfterUndo)
		// The next undo takes back the first turn, and the tree is as
		// before the session.
		if out, err := exec.Command(courier, "--root", root, "undo").CombinedOutput(); err != nil || !strings.Contains(string(out), "request 1 ") {
			t.Fatalf("%s\nsecond undo: %v\n%s", ctx, err, out)
		}
		if d := treeDiff(snapshot(t, filepath.Join(root, "workspace"), all), wantOriginal); d != "" {
			t.Fatalf("%s\nafter undoing both turns the workspace differs from before the session:\n%s", ctx, d)
		}
	}
	t.Logf("%d iterations, %d killed mid-undo (an undo takes %s)", iterations, killed, full)
}

// prepareUndo makes the template root: a session with two applied turns
// and a file of the second changed by hand since. It keeps the workspace
// after the first turn in after-first, next to the template.
func prepareUndo(t *testing.T, courier, root string) string {
	t.Helper()
	ws := filepath.Join(root, "workspace")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "base.txt"), []byte(baseText()), 0o644))
	out, err := exec.Command(courier, "--root", root, "new", "--no-watch", "undo crash test").CombinedOutput()
	if err != nil {
		t.Fatalf("courier new: %v\n%s", err, out)
	}
	id := sessionOf(t, out)
	first, second := undoReplies()
	for i, reply := range []string{first, second} {
		must(t, os.WriteFile(filepath.Join(root, "inbox", fmt.Sprintf("r%d.txt", i+1)), []byte(reply), 0o644))
		if out, err := exec.Command(courier, "--root", root, "process").CombinedOutput(); err != nil {
			t.Fatalf("turn %d: %v\n%s", i+1, err, out)
		}
		if i == 0 {
			if out, err := exec.Command("cp", "-a", ws, filepath.Join(filepath.Dir(root), "after-first")).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
		}
	}
	must(t, os.WriteFile(filepath.Join(ws, "pkg1", "f1.txt"), []byte("later work by hand\n"), 0o644))
	return id
}

// copyRoot copies a root and points its session at the copy's workspace.
func copyRoot(t *testing.T, from, to, id string) string {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	p := filepath.Join(to, "sessions", id+".json")
	var st map[string]any
	must(t, json.Unmarshal([]byte(mustRead(t, p)), &st))
	st["workspace"] = filepath.Join(to, "workspace")
	data, err := json.MarshalIndent(st, "", "  ")
	must(t, err)
	must(t, os.WriteFile(p, data, 0o644))
	return to
}

// checkUndoneOnce checks a root after one undo of its second turn.
func checkUndoneOnce(t *testing.T, ctx, root, id string, want map[string]string) {
	t.Helper()
	got := snapshot(t, filepath.Join(root, "workspace"), func(string) bool { return false })
	if d := treeDiff(got, want); d != "" {
		t.Fatalf("%s\nworkspace differs from one undo of the second turn:\n%s", ctx, d)
	}
	st := loadState(t, ctx, root, id)
	if st.seq != 4 || st.complete || st.undoing {
		t.Fatalf("%s\nsession at sequence %d (complete %v, undo under way %v), want 4", ctx, st.seq, st.complete, st.undoing)
	}
	entries, err := os.ReadDir(filepath.Join(root, "outbox"))
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want4 := []string{id + "_seq0001.txt", id + "_seq0002.txt", id + "_seq0003.txt", id + "_seq0004.txt"}
	if fmt.Sprint(names) != fmt.Sprint(want4) {
		t.Fatalf("%s\noutbox holds %v, want %v", ctx, names, want4)
	}
	if !strings.Contains(readOutbox(t, root, id, 4), "The user undid the changes of your reply to request 2.") {
		t.Fatalf("%s\noutbox 4 lacks the undo notice", ctx)
	}
	kept := filepath.Join(root, "sessions", id, "kept", "0002", "pkg1", "f1.txt")
	if data, err := os.ReadFile(kept); err != nil || string(data) != "later work by hand\n" {
		t.Fatalf("%s\nthe file changed by hand was not kept: %q, %v", ctx, data, err)
	}
	log, err := exec.Command("courier", "--root", root, "log", id).CombinedOutput()
	if err != nil || strings.Count(string(log), "[undone]") != 1 || !strings.Contains(string(log), "r2.txt  42 commands, 0 failed [undone]") {
		t.Fatalf("%s\nlog: %v\n%s", ctx, err, log)
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".courier-tmp-") {
			t.Fatalf("%s\ntemporary file left: %s", ctx, p)
		}
		return nil
	})
}

// commandsReplies are the turns of the crash test of commands and undo:
// the first adds a little, the second wrecks the tree with commands (modes
// taken away, files rewritten, the source tree deleted, many files made).
func commandsReplies() (first, second string) {
	first = "[CREATE_FILE path=\"notes.txt\"]\nfirst turn\n[/CREATE_FILE]\n[RUN_COMMAND]\necho one > one.txt && chmod 0600 one.txt\n[/RUN_COMMAND]\n"
	second = `[RUN_COMMAND]
chmod -R go-rwx src && chmod -x tool.sh
[/RUN_COMMAND]
[RUN_COMMAND]
for f in src/*/f1.txt; do echo rewritten > "$f"; done
[/RUN_COMMAND]
[RUN_COMMAND]
rm -rf src
[/RUN_COMMAND]
[EDIT_FILE path="notes.txt"]
<<<<<<< SEARCH
first turn
=======
second turn
>>>>>>> REPLACE
[/EDIT_FILE]
[RUN_COMMAND]
mkdir -p gen && awk 'BEGIN { for (i = 0; i < 400; i++) { f = "gen/" i; print i > f; close(f) } }'
[/RUN_COMMAND]
[RUN_COMMAND]
rm one.txt && ln -s notes.txt one.txt
[/RUN_COMMAND]
`
	return first, second
}

// TestCrashUndoCommands kills courier with SIGKILL at a random moment
// while it applies a turn of destructive commands ('rm -rf' of a tree,
// chmod), lets the next run finish the turn, then kills 'courier undo' at
// a random moment and lets the next run finish it. Every time, the
// workspace ends exactly as before the turn (a full listing: types,
// modes, sizes, SHA-256, symlink targets), the turn is undone once and
// the turn before it not at all.
func TestCrashUndoCommands(t *testing.T) {
	courier, err := exec.LookPath("courier")
	if err != nil {
		t.Fatalf("the courier test binary is not on PATH: %v", err)
	}
	iterations := crashIterations(t, 8)
	base := t.TempDir()
	tmpl := filepath.Join(base, "template")
	ws := filepath.Join(tmpl, "workspace")
	for d := range 8 {
		for f := range 25 {
			p := filepath.Join(ws, "src", fmt.Sprintf("pkg%d", d), fmt.Sprintf("f%d.txt", f))
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("package %d file %d\n", d, f), 40)), 0o644))
		}
	}
	must(t, os.WriteFile(filepath.Join(ws, "src", "run.sh"), []byte("#!/bin/sh\n"), 0o750))
	must(t, os.WriteFile(filepath.Join(ws, "tool.sh"), []byte("#!/bin/sh\necho tool\n"), 0o755))
	out, err := exec.Command(courier, "--root", tmpl, "new", "--no-watch", "commands crash test").CombinedOutput()
	if err != nil {
		t.Fatalf("courier new: %v\n%s", err, out)
	}
	id := sessionOf(t, out)
	first, second := commandsReplies()
	must(t, os.WriteFile(filepath.Join(tmpl, "inbox", "r1.txt"), []byte(first), 0o644))
	if out, err := exec.Command(courier, "--root", tmpl, "process").CombinedOutput(); err != nil {
		t.Fatalf("turn 1: %v\n%s", err, out)
	}
	want, err := treeListing(ws)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(tmpl, "inbox", "r2.txt"), []byte(second), 0o644))

	// The reference: the turn and its undo without interruption, timed.
	ref := copyRoot(t, tmpl, filepath.Join(base, "reference"), id)
	start := time.Now()
	if out, err := exec.Command(courier, "--root", ref, "--yes", "process").CombinedOutput(); err != nil || !strings.Contains(string(out), "6 commands: 6 ok") {
		t.Fatalf("reference turn: %v\n%s", err, out)
	}
	fullTurn := time.Since(start)
	start = time.Now()
	if out, err := exec.Command(courier, "--root", ref, "undo").CombinedOutput(); err != nil {
		t.Fatalf("reference undo: %v\n%s", err, out)
	}
	fullUndo := time.Since(start)
	if got, err := treeListing(filepath.Join(ref, "workspace")); err != nil || got != want {
		t.Fatalf("even without a crash, undo does not restore the tree (%v):\n%s\nwant\n%s", err, got, want)
	}

	// Only the second turn is undone, once; a command caught by the kill
	// counts as failed.
	undoneTurn2 := regexp.MustCompile(`r2\.txt  6 commands, \d failed \[undone\]`)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	killedTurn, killedUndo := 0, 0
	for it := 0; it < iterations; it++ {
		root := copyRoot(t, tmpl, filepath.Join(base, fmt.Sprintf("run%d", it)), id)
		out, delay, killed := runKilled(t, rng, fullTurn, courier, "--root", root, "--yes", "process")
		if killed {
			killedTurn++
		}
		ctx := fmt.Sprintf("iteration %d (turn killed after %s of %s)\nturn:\n%s", it, delay, fullTurn, out)
		rec, err := exec.Command(courier, "--root", root, "--yes", "process").CombinedOutput()
		ctx += fmt.Sprintf("\nrecovery of the turn:\n%s", rec)
		if err != nil {
			t.Fatalf("%s\nrecovery failed: %v", ctx, err)
		}
		if st := loadState(t, ctx, root, id); st.seq != 3 {
			t.Fatalf("%s\nafter the turn the session is at request %d, want 3", ctx, st.seq)
		}
		out, delay, killed = runKilled(t, rng, fullUndo, courier, "--root", root, "undo")
		if killed {
			killedUndo++
		}
		ctx += fmt.Sprintf("\nundo (killed after %s of %s):\n%s", delay, fullUndo, out)
		rec, err = exec.Command(courier, "--root", root, "process").CombinedOutput()
		ctx += fmt.Sprintf("\nrecovery of the undo:\n%s", rec)
		if err != nil {
			t.Fatalf("%s\nrecovery failed: %v", ctx, err)
		}
		if st := loadState(t, ctx, root, id); st.seq == 3 {
			// Killed before the undo began: the person runs it again.
			again, err := exec.Command(courier, "--root", root, "undo").CombinedOutput()
			if err != nil {
				t.Fatalf("%s\nundo again: %v\n%s", ctx, err, again)
			}
		}
		got, err := treeListing(filepath.Join(root, "workspace"))
		must(t, err)
		if got != want {
			t.Fatalf("%s\nthe workspace differs from before the turn:\n%s\nwant\n%s", ctx, got, want)
		}
		st := loadState(t, ctx, root, id)
		if st.seq != 4 || st.undoing {
			t.Fatalf("%s\nsession at request %d (undo under way %v), want 4", ctx, st.seq, st.undoing)
		}
		log, err := exec.Command(courier, "--root", root, "log", id).CombinedOutput()
		if err != nil || strings.Count(string(log), "[undone]") != 1 || !undoneTurn2.Match(log) {
			t.Fatalf("%s\nlog: %v\n%s", ctx, err, log)
		}
	}
	t.Logf("%d iterations: %d turns and %d undos killed midway (a turn takes %s, an undo %s)", iterations, killedTurn, killedUndo, fullTurn, fullUndo)
}
