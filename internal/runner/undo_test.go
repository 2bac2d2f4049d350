package runner_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/runner"
)

// tree records every file and folder of the workspace with its mode and
// content, so a test can compare the workspace byte for byte.
func (f *fixture) tree() map[string]string {
	f.t.Helper()
	out := map[string]string{}
	root := f.paths.Workspace
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[rel] = "folder " + info.Mode().String()
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = fmt.Sprintf("%s %q", info.Mode(), data)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) writeMode(rel, content string, mode fs.FileMode) {
	f.t.Helper()
	f.writeWS(rel, content)
	if err := os.Chmod(f.wsPath(rel), mode); err != nil {
		f.t.Fatal(err)
	}
}

const changeReply = `[CREATE_FILE path="new/deep/file.txt"]
fresh
[/CREATE_FILE]
[CREATE_FILE path="existing/x.txt"]
x
[/CREATE_FILE]
[EDIT_FILE path="keep.txt"]
<<<<<<< SEARCH
line2
=======
LINE2
>>>>>>> REPLACE
[/EDIT_FILE]
[DELETE_FILE path="script.sh"]
[CREATE_FILE path="data.txt"]
new data
more
[/CREATE_FILE]
[EDIT_FILE path="data.txt" start_line="2" end_line="2"]
newer
[/EDIT_FILE]
[RUN_COMMAND]
echo side > side.txt
[/RUN_COMMAND]
`

// undo reverts the last turn of session id with changes, as 'courier
// undo' does.
func (f *fixture) undo(id string) (runner.UndoReport, error) {
	f.t.Helper()
	s, err := f.r.Hold(id, "courier undo")
	if err != nil {
		f.t.Fatal(err)
	}
	defer s.Release()
	return s.Undo()
}

// TestUndoRestores undoes a turn that created, edited and deleted files
// and ran a command: the workspace is back byte for byte, modes included,
// the folders the turn made are gone, what the command wrote is gone, and
// the LLM is told in a new request.
func TestUndoRestores(t *testing.T) {
	testUndoRestores(t, true)
}

// Without snapshots, undo reverts the file commands and says that what
// commands did stays.
func TestUndoWithoutSnapshotsRestoresFileCommands(t *testing.T) {
	testUndoRestores(t, false)
}

func testUndoRestores(t *testing.T, snapshots bool) {
	f := newFixture(t)
	if !snapshots {
		f.snapshots.Off = true
		f.r, f.rec = f.runner(nil)
	}
	f.writeMode("keep.txt", "line1\r\nline2", 0o640)
	f.writeMode("script.sh", "#!/bin/sh\necho hi\n", 0o755)
	f.writeMode("data.txt", "old data\n", 0o600)
	f.writeWS("existing/other.txt", "o\n")
	id := f.create("change things")
	before := f.tree()
	f.apply(id, "reply.txt", changeReply)
	for _, r := range f.load(id).LastResults {
		if !r.Success() {
			t.Fatalf("the turn failed: %s %s", r.Type, r.Summary)
		}
	}

	rep, err := f.undo(id)
	if err != nil {
		t.Fatal(err)
	}
	after := f.tree()
	if side, ok := after["side.txt"]; snapshots && ok {
		t.Errorf("the command's file is still there: %q", side)
	} else if !snapshots && !strings.Contains(side, "side") {
		t.Errorf("the command's file was touched: %q", side)
	}
	delete(after, "side.txt")
	if !reflect.DeepEqual(after, before) {
		t.Errorf("workspace after undo:\n%v\nwant\n%v", after, before)
	}
	if rep.Sequence != 1 {
		t.Errorf("undid turn %d, want 1", rep.Sequence)
	}
	if want := []string{"data.txt", "keep.txt", "script.sh"}; !reflect.DeepEqual(rep.Restored, want) {
		t.Errorf("restored %q, want %q", rep.Restored, want)
	}
	wantRemoved := []string{"existing/x.txt", "new/deep/file.txt"}
	commands := "What your commands changed was not undone."
	if snapshots {
		wantRemoved = append(wantRemoved, "side.txt")
		commands = "What your commands changed was undone too."
	}
	if want := wantRemoved; !reflect.DeepEqual(rep.Removed, want) {
		t.Errorf("removed %q, want %q", rep.Removed, want)
	}
	if len(rep.Kept) != 0 {
		t.Errorf("kept %v", rep.Kept)
	}

	// The LLM hears of it in the next request, and the person through
	// the reporter.
	if rep.Outbox != f.requestPath(id, 3) || f.load(id).SequenceNumber != 3 {
		t.Errorf("request %q, sequence %d", rep.Outbox, f.load(id).SequenceNumber)
	}
	notice := "The user undid the changes of your reply to request 1. Restored to their earlier content: data.txt, keep.txt, script.sh. Removed (they did not exist before): " + strings.Join(wantRemoved, ", ") + ". " + commands + " Take the workspace as it is now (read again what you need) and continue."
	text := f.request(id, 3)
	if !strings.Contains(text, "## Previous Command Results\n"+notice+"\n") {
		t.Errorf("request 3 lacks the notice:\n%s", text[strings.Index(text, "=== CONTEXT ==="):])
	}
	undone := eventsOf[runner.TurnUndone](f.rec)
	if len(undone) != 1 || undone[0].Session != id || undone[0].Report.Sequence != 1 {
		t.Errorf("undo reported as %+v", undone)
	}
	written := eventsOf[runner.RequestWritten](f.rec)
	if last := written[len(written)-1]; last.Sequence != 3 || last.Text != text {
		t.Errorf("last request announced: %d", last.Sequence)
	}
	if f.kinds(id, 1) != "begin apply/0 apply/1 apply/2 apply/3 apply/4 apply/5 result/0 result/1 result/2 result/3 result/4 result/5 start/6 result/6 undone" {
		t.Errorf("journal %q does not end with the undo", f.kinds(id, 1))
	}
}

func TestUndoWalksBack(t *testing.T) {
	f := newFixture(t)
	id := f.create("versions")
	f.apply(id, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\nv1\n[/CREATE_FILE]\n")
	f.apply(id, "r2.txt", "[CREATE_FILE path=\"a.txt\"]\nv2\n[/CREATE_FILE]\n[CREATE_FILE path=\"b.txt\"]\nb\n[/CREATE_FILE]\n")
	f.apply(id, "r3.txt", "[MESSAGE]\nnothing to change\n[/MESSAGE]\n")

	// The turn that changed nothing is undone first: undo takes back the
	// most recent turn.
	rep, err := f.undo(id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sequence != 3 || len(rep.Restored)+len(rep.Removed) != 0 || f.readWS("a.txt") != "v2\n" {
		t.Errorf("first undo: turn %d, restored %v, removed %v", rep.Sequence, rep.Restored, rep.Removed)
	}
	rep, err = f.undo(id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sequence != 2 || f.readWS("a.txt") != "v1\n" || f.existsWS("b.txt") {
		t.Errorf("second undo: turn %d, a.txt %q, b.txt there: %v", rep.Sequence, f.readWS("a.txt"), f.existsWS("b.txt"))
	}
	rep, err = f.undo(id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sequence != 1 || f.existsWS("a.txt") {
		t.Errorf("third undo: turn %d, a.txt there: %v", rep.Sequence, f.existsWS("a.txt"))
	}
	seq := f.load(id).SequenceNumber
	_, err = f.undo(id)
	var nothing *runner.NothingToUndoError
	if !errors.As(err, &nothing) || nothing.Session != id || !strings.Contains(err.Error(), "has no file changes left to undo") {
		t.Errorf("fourth undo: %v", err)
	}
	if f.load(id).SequenceNumber != seq || exists(f.requestPath(id, seq+1)) {
		t.Error("a failed undo wrote a new request")
	}
	// The session goes on from the undone state.
	f.apply(id, "r4.txt", "[CREATE_FILE path=\"a.txt\"]\nv3\n[/CREATE_FILE]\n")
	if f.readWS("a.txt") != "v3\n" {
		t.Error("the reply after the undos was not applied")
	}
}

// TestUndoKeepsLaterWork: files changed after the turn are saved aside
// before they are put back.
func TestUndoKeepsLaterWork(t *testing.T) {
	f := newFixture(t)
	f.writeWS("old.txt", "original old\n")
	f.writeWS("same.txt", "same\n")
	id := f.create("notes")
	f.apply(id, "r1.txt", "[CREATE_FILE path=\"notes.txt\"]\nfrom the llm\n[/CREATE_FILE]\n[DELETE_FILE path=\"old.txt\"]\n[CREATE_FILE path=\"same.txt\"]\nsame too\n[/CREATE_FILE]\n")
	f.writeWS("notes.txt", "the person's notes\n")
	f.writeWS("old.txt", "the person's old\n")

	rep, err := f.undo(id)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"notes.txt": "the person's notes\n", "old.txt": "the person's old\n"}
	if len(rep.Kept) != len(want) {
		t.Errorf("kept %v, want %v", rep.Kept, want)
	}
	for p, content := range want {
		if got := readFile(t, rep.Kept[p]); got != content {
			t.Errorf("kept copy of %s holds %q, want %q", p, got, content)
		}
	}
	if f.existsWS("notes.txt") || f.readWS("old.txt") != "original old\n" || f.readWS("same.txt") != "same\n" {
		t.Error("the files were not put back as before the turn")
	}
}

func TestUndoReopensCompleteSession(t *testing.T) {
	f := newFixture(t)
	id := f.create("finish")
	f.apply(id, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\na\n[/CREATE_FILE]\n[DONE]\nDone.\n[/DONE]\n")
	rep, err := f.undo(id)
	if err != nil {
		t.Fatal(err)
	}
	saved := f.load(id)
	if saved.IsComplete || saved.Summary != "" || saved.SequenceNumber != 2 || rep.Outbox != f.requestPath(id, 2) || f.existsWS("a.txt") {
		t.Errorf("after undo: complete %v, summary %q, sequence %d, request %q", saved.IsComplete, saved.Summary, saved.SequenceNumber, rep.Outbox)
	}
	if info, err := f.r.Status(id); err != nil || info.State != runner.StateWaiting {
		t.Errorf("status %+v, %v", info, err)
	}
}

func TestUndoRefusedWhileUnfinished(t *testing.T) {
	f := newFixture(t)
	id := f.create("clean")
	f.apply(id, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\na\n[/CREATE_FILE]\n")
	var waiting *runner.WaitingError
	if err := f.tryApply(f.r, id, "r2.txt", "[RUN_COMMAND]\nrm -rf a.txt\n[/RUN_COMMAND]\n"); !errors.As(err, &waiting) {
		t.Fatalf("the turn does not wait: %v", err)
	}
	_, err := f.undo(id)
	var unfinished *runner.UnfinishedError
	if !errors.As(err, &unfinished) || unfinished.Session != id || unfinished.Reply != "r2.txt" || !unfinished.Approval {
		t.Errorf("undo: %v", err)
	}
	if f.readWS("a.txt") != "a\n" || f.load(id).SequenceNumber != 2 {
		t.Error("undo changed files or the session while a turn was unfinished")
	}
}

func TestLog(t *testing.T) {
	f := newFixture(t)
	f.writeWS("b.txt", "b1\nb2\n")
	id := f.create("log")
	f.apply(id, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\n1\n2\n[/CREATE_FILE]\n[RUN_COMMAND]\nexit 1\n[/RUN_COMMAND]\n")
	f.apply(id, "r2.txt", `[EDIT_FILE path="a.txt"]
<<<<<<< SEARCH
2
=======
two
>>>>>>> REPLACE
[/EDIT_FILE]
[DELETE_FILE path="b.txt"]
[CREATE_FILE path="c.txt"]
c
[/CREATE_FILE]
[DELETE_FILE path="c.txt"]
`)
	if _, err := f.undo(id); err != nil {
		t.Fatal(err)
	}
	var waiting *runner.WaitingError
	if err := f.tryApply(f.r, id, "r3.txt", "[RUN_COMMAND]\nrm -rf a.txt\n[/RUN_COMMAND]\n"); !errors.As(err, &waiting) {
		t.Fatal(err)
	}

	info, turns, err := f.r.Log(id)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != id || info.State != runner.StateAwaitingApproval || info.Sequence != 4 {
		t.Errorf("log of %+v", info)
	}
	type entry struct {
		Sequence         int
		Reply            string
		Commands, Failed int
		Files            string
		Undone, Finished bool
	}
	var got []entry
	for _, ti := range turns {
		if ti.AppliedAt.IsZero() {
			t.Errorf("turn %d has no time", ti.Sequence)
		}
		var files []string
		for _, c := range ti.Changes {
			files = append(files, fmt.Sprintf("%d %s %s +%d -%d", c.Index, c.Path, c.Action, c.Added, c.Removed))
		}
		got = append(got, entry{ti.Sequence, ti.Reply, ti.Commands, ti.Failed, strings.Join(files, ", "), ti.Undone, ti.Finished})
	}
	// c.txt, made and removed by one run of file commands, never was.
	want := []entry{
		{1, "r1.txt", 2, 1, "1 a.txt created +2 -0", false, true},
		{2, "r2.txt", 4, 0, "1 a.txt edited +1 -1, 2 b.txt deleted +0 -2", true, true},
		{4, "r3.txt", 1, 0, "", false, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("log:\n%+v\nwant\n%+v", got, want)
	}
}
