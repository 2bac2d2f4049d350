package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// turn reads the current turn back, to look at what it keeps.
func (h *harness) turn() *history.Turn {
	h.t.Helper()
	t, err := h.store.ReadTurn(h.st.SessionID, h.st.SequenceNumber)
	if err != nil {
		h.t.Fatal(err)
	}
	return t
}

// TestRunOfFileCommandsJournaledTogether: file commands are journaled as a
// run and made together; a RUN_COMMAND ends the run, so it sees the files.
func TestRunOfFileCommandsJournaledTogether(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	out := h.apply(create("a.txt", "a\n"), create("b/c.txt", "c\n"), run("cat a.txt b/c.txt > seen.txt"), replace("a.txt", "a", "A"))
	if got, want := h.kinds(), "begin apply apply result result start result apply result"; got != want {
		t.Errorf("journal: %s\nwant     %s", got, want)
	}
	if got := h.read("seen.txt"); got != "a\nc\n" {
		t.Errorf("the command saw %q, want both files", got)
	}
	if h.read("a.txt") != "A\n" {
		t.Errorf("a.txt is %q", h.read("a.txt"))
	}
	for i, r := range out.Results {
		if !r.Success() {
			t.Errorf("command %d: %s %s", i, r.Status, r.Summary)
		}
	}
	// Recorded results that are the planned ones are not written twice.
	for _, r := range h.records() {
		if r.Kind == history.RecordResult && r.Index != 2 && (r.Result != nil || !r.AsPlanned) {
			t.Errorf("result of command %d written in full: %+v", r.Index, r.Result)
		}
	}
}

// TestTurnKeepsOnlyWhatUndoNeeds: the content a file had before the turn is
// kept; the contents the turn's edits produce on the way are not kept at
// all.
func TestTurnKeepsOnlyWhatUndoNeeds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	orig := "one\ntwo\nthree\nfour\n"
	h.write("f.txt", orig)
	h.apply(
		replace("f.txt", "one", "1"),
		lines("f.txt", 2, 2, "2\n"),
		lines("f.txt", 3, 3, "3\n"),
		replace("f.txt", "four", "4"),
		lines("f.txt", 1, 1, "uno\n"),
		create("new.txt", "new\n"),
		del("f.txt"),
	)
	if !h.kept(orig) {
		t.Error("f.txt as it was is not kept")
	}
	for _, between := range []string{"1\ntwo\nthree\nfour\n", "1\n2\nthree\nfour\n", "1\n2\n3\n4\n", "uno\n2\n3\n4\n"} {
		if h.kept(between) {
			t.Errorf("%q, which only the reply's edits made on the way, is kept", between)
		}
	}
}

// TestLineRangeBaseRebuiltAfterCrash: a line-range edit following a
// search/replace edit of the same file numbers its lines from the edited
// text, which the turn does not keep. After a crash before the run was
// made, recovery rebuilds that text from the journal and finishes the
// turn exactly as an uninterrupted run would have.
func TestLineRangeBaseRebuiltAfterCrash(t *testing.T) {
	t.Parallel()
	reply := []command.Command{
		replace("f.txt", "b", "B"),
		lines("f.txt", 1, 1, "A1\nA2\n"),
		lines("f.txt", 4, 4, "D\n"),
		replace("f.txt", "D", "DD"),
		lines("f.txt", 2, 2, "second\n"),
		create("after.txt", "after\n"),
	}
	const orig = "a\nb\nc\nd\ne\n"
	ref := newHarness(t, engine.Options{})
	ref.write("f.txt", orig)
	ref.apply(reply...)
	want := ref.read("f.txt")
	if want != "A1\nsecond\nB\nc\nDD\ne\n" {
		t.Fatalf("reference run: f.txt is %q", want)
	}

	for keep := 1; keep <= 1+len(reply); keep++ {
		t.Run(fmt.Sprintf("%d records kept", keep), func(t *testing.T) {
			h := newHarness(t, engine.Options{})
			h.write("f.txt", orig)
			h.apply(reply...)
			h.crashAfter(keep)
			h.write("f.txt", orig) // the run was not made
			h.remove("after.txt")
			out := h.resume()
			if got := h.read("f.txt"); got != want {
				t.Errorf("f.txt is %q, want %q%s", got, want, summaries(out.Results))
			}
			for i, r := range out.Results {
				if !r.Success() {
					t.Errorf("command %d: %s %s", i, r.Status, r.Summary)
				}
			}
			checkJournal(t, h, len(reply))
		})
	}
}

// TestLineRangeContinuedAfterCrash: the run was made and recorded, then
// courier died; the reply's next line-range edit continues the numbering
// of the earlier ones, from a text the turn does not keep (a search/replace
// edit of the reply produced it). Recovery rebuilds it from the journal.
func TestLineRangeContinuedAfterCrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.write("f.txt", "a\nb\nc\nd\n")
	h.apply(
		replace("f.txt", "a", "A"),
		lines("f.txt", 2, 2, "B1\nB2\n"),
		read("f.txt"), // makes the run before it
		lines("f.txt", 4, 4, "D\n"),
	)
	const want = "A\nB1\nB2\nc\nD\n"
	if got := h.read("f.txt"); got != want {
		t.Fatalf("f.txt is %q, want %q", got, want)
	}
	if got := h.kinds(); got != "begin apply apply result result apply result result" {
		t.Fatalf("journal: %s", got)
	}
	if h.kept("A\nb\nc\nd\n") {
		t.Error("the text the line numbers refer to is kept, though the journal can rebuild it")
	}
	// Courier died after journaling the last edit, before making it.
	h.crashAfter(6)
	h.write("f.txt", "A\nB1\nB2\nc\nd\n")
	out := h.resume()
	if got := h.read("f.txt"); got != want {
		t.Errorf("after recovery f.txt is %q, want %q%s", got, want, summaries(out.Results))
	}
}

// TestLineRangeBaseKeptAfterCommand: when a RUN_COMMAND changed the file,
// the journal cannot rebuild the text a following line-range edit numbers
// from, so the turn keeps it, and recovery uses it.
func TestLineRangeBaseKeptAfterCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.write("f.txt", "a\nb\nc\n")
	reply := []command.Command{
		replace("f.txt", "a", "A"),
		run("printf 'x\\ny\\nz\\n' >> f.txt"),
		lines("f.txt", 5, 5, "Y\n"),
		lines("f.txt", 6, 6, "Z\n"),
	}
	h.apply(reply...)
	const want = "A\nb\nc\nx\nY\nZ\n"
	if got := h.read("f.txt"); got != want {
		t.Fatalf("f.txt is %q, want %q", got, want)
	}
	afterCommand := "A\nb\nc\nx\ny\nz\n"
	if !h.kept(afterCommand) {
		t.Error("the text the command left, which the line numbers refer to, is not kept")
	}
	// Crash after the line-range edits were journaled, before they were
	// made: begin, apply, result, start, result, apply, apply.
	h.crashAfter(7)
	h.write("f.txt", afterCommand)
	out := h.resume()
	if got := h.read("f.txt"); got != want {
		t.Errorf("after recovery f.txt is %q, want %q%s", got, want, summaries(out.Results))
	}
	if n := h.lineCount("f.txt"); n != 6 {
		t.Errorf("f.txt has %d lines", n)
	}
}

// TestKeepLimit: a reply that changes more than the turn may keep copies of
// gets a clear result for the file it cannot change, which stays as it was;
// the other changes go on.
func TestKeepLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{KeepLimit: 1000})
	big := strings.Repeat("0123456789\n", 200) // 2,200 bytes
	h.write("big.txt", big)
	h.write("small.txt", "small\n")
	out := h.apply(replace("big.txt", "0123", "abcd"), replace("small.txt", "small", "SMALL"), create("new.txt", "new\n"), del("big.txt"))
	for _, i := range []int{0, 3} {
		r := out.Results[i]
		if r.Status != command.Failed || !strings.Contains(r.Summary, "Not changed: courier keeps a copy of each file a reply changes") {
			t.Errorf("command %d: %s %q, want refused for the copy limit", i, r.Status, r.Summary)
		}
	}
	if h.read("big.txt") != big {
		t.Error("big.txt was changed")
	}
	if !out.Results[1].Success() || h.read("small.txt") != "SMALL\n" || !out.Results[2].Success() || !h.exists("new.txt") {
		t.Errorf("the changes within the limit: %s", summaries(out.Results))
	}
	if h.kept(big) {
		t.Error("the turn keeps big.txt, over its limit")
	}
}

// TestAliasedPaths: a folder reached through a symlink, or the file a
// symlink names, is the same file under another name. A change through one
// name must see the change made through the other earlier in the reply.
func TestAliasedPaths(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.write("real/f.txt", "one\n")
	h.write("g.txt", "gee\n")
	if err := os.Symlink("real", h.path("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("g.txt", h.path("g-link.txt")); err != nil {
		t.Fatal(err)
	}
	out := h.apply(
		replace("real/f.txt", "one", "two"),
		replace("link/f.txt", "two", "three"),
		replace("g.txt", "gee", "G"),
		replace("g-link.txt", "G", "GG"),
	)
	for i, r := range out.Results {
		if !r.Success() {
			t.Errorf("command %d: %s %s", i, r.Status, r.Summary)
		}
	}
	if got := h.read("real/f.txt"); got != "three\n" {
		t.Errorf("real/f.txt is %q, want both edits", got)
	}
	// Writing a file through a symlink replaces the link (as ever); the
	// edit through it started from what the earlier edit left.
	if got := h.read("g-link.txt"); got != "GG\n" {
		t.Errorf("g-link.txt is %q", got)
	}
}

// TestSpecialFilesRefused: a named pipe is not read (that would block
// forever): each file command on it fails at once and leaves it alone.
func TestSpecialFilesRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	sandboxtest.Mkfifo(t, h.path("pipe"))
	done := make(chan engine.Outcome, 1)
	go func() { done <- h.apply(del("pipe"), replace("pipe", "a", "b"), create("pipe", "x\n")) }()
	var out engine.Outcome
	select {
	case out = <-done:
	case <-time.After(20 * time.Second): // a hang guard, not a measurement
		t.Fatal("a file command on a named pipe blocked")
	}
	for i, r := range out.Results {
		if r.Status != command.Failed || !strings.Contains(r.Summary, "named pipe") {
			t.Errorf("command %d: %s %q", i, r.Status, r.Summary)
		}
	}
	if info, err := os.Lstat(h.path("pipe")); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was changed: %v %v", info, err)
	}
}

// TestCreateAndDeleteInOneRun: a file made and removed by the same run is
// simply not there, and both commands succeed.
func TestCreateAndDeleteInOneRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	out := h.apply(create("tmp/x.txt", "x\n"), del("tmp/x.txt"))
	for i, r := range out.Results {
		if !r.Success() {
			t.Errorf("command %d: %s %s", i, r.Status, r.Summary)
		}
	}
	if h.exists("tmp/x.txt") {
		t.Error("tmp/x.txt exists")
	}
}

// TestWriteFailureFailsTheFilesChanges: when a file of the run cannot be
// written, every change of that file in the run fails, and the other files
// are made. (A file in a folder the person made read-only: planning reads
// it and finds nothing wrong, writing fails.)
func TestWriteFailureFailsTheFilesChanges(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("NOT RUN as root: root writes into read-only folders; .ci/run runs the engine tests again as an ordinary user")
	}
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.write("ok.txt", "ok\n")
	h.write("ro/f.txt", "a\n")
	ro := filepath.Join(h.dir, "ro")
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(ro, 0o755)
	out := h.apply(replace("ro/f.txt", "a", "b"), replace("ro/f.txt", "b", "c"), replace("ok.txt", "ok", "OK"), create("dir/b.txt", "b\n"))
	for _, i := range []int{0, 1} {
		if r := out.Results[i]; r.Status != command.Failed || !strings.HasPrefix(r.Summary, "Cannot change") {
			t.Errorf("command %d: %s %q, want a failure to write", i, r.Status, r.Summary)
		}
	}
	if !out.Results[2].Success() || h.read("ok.txt") != "OK\n" || !out.Results[3].Success() || !h.exists("dir/b.txt") {
		t.Errorf("the other changes: %s", summaries(out.Results))
	}
	if h.read("ro/f.txt") != "a\n" {
		t.Errorf("ro/f.txt holds %q", h.read("ro/f.txt"))
	}
	if entries, _ := os.ReadDir(h.dir); len(entries) != 3 {
		t.Errorf("workspace holds %d entries, want ok.txt, ro and dir", len(entries))
	}
	if entries, _ := os.ReadDir(ro); len(entries) != 1 {
		t.Errorf("ro holds %d entries, want f.txt alone", len(entries))
	}
}

// TestDiffBudget: past the turn's budget for diffs, a change's result keeps
// its line counts and says its diff was left out.
func TestDiffBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{DiffBudget: 2048})
	lines400 := func(s string) string { return strings.Repeat(s+"\n", 400) }
	out := h.apply(create("a.txt", lines400("a")), create("b.txt", lines400("b")))
	if a := out.Results[0]; a.Diff == "" || len(a.Diff) > 2048 || strings.Contains(a.Summary, "left out") {
		t.Errorf("a.txt, within the budget: %q with a diff of %d bytes", a.Summary, len(a.Diff))
	}
	b := out.Results[1]
	if b.Diff != "" || b.Added != 400 || !strings.HasSuffix(b.Summary, "(+400 -0; diff left out: this reply's diffs passed 2 KB)") {
		t.Errorf("b.txt, past the budget: %q, diff of %d bytes, +%d", b.Summary, len(b.Diff), b.Added)
	}
	if !b.Success() || h.read("b.txt") != lines400("b") {
		t.Error("the change itself was not made")
	}
}
