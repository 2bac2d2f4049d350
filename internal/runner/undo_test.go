package runner_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/hint"
	"github.com/courier-agent/courier/internal/policy"
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

// TestUndoRestores undoes a turn that created, edited and deleted files:
// the workspace is back byte for byte, modes included, the folders the
// turn made are gone, and the LLM is told in a new outbox.
func TestUndoRestores(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	f.writeMode("keep.txt", "line1\r\nline2", 0o640)
	f.writeMode("script.sh", "#!/bin/sh\necho hi\n", 0o755)
	f.writeMode("data.txt", "old data\n", 0o600)
	f.writeWS("existing/other.txt", "o\n")
	st := f.newSession("change things")
	before := f.tree()
	out := f.process(st, "reply.txt", changeReply)
	for _, r := range out.Engine.Results {
		if !r.Success() {
			t.Fatalf("the turn failed: %s %s", r.Type, r.Summary)
		}
	}

	rep, err := f.l.Undo(st)
	if err != nil {
		t.Fatal(err)
	}
	after := f.tree()
	if side := after["side.txt"]; !strings.Contains(side, "side") {
		t.Errorf("the command's file was touched: %q", side)
	}
	delete(after, "side.txt")
	if !reflect.DeepEqual(after, before) {
		t.Errorf("workspace after undo:\n%v\nwant\n%v", after, before)
	}
	if rep.Sequence != 1 {
		t.Errorf("undid turn %d, want 1", rep.Sequence)
	}
	if want := []string{"keep.txt", "script.sh", "data.txt"}; !reflect.DeepEqual(rep.Restored, want) {
		t.Errorf("restored %q, want %q", rep.Restored, want)
	}
	if want := []string{"new/deep/file.txt", "existing/x.txt"}; !reflect.DeepEqual(rep.Removed, want) {
		t.Errorf("removed %q, want %q", rep.Removed, want)
	}
	if len(rep.Kept) != 0 {
		t.Errorf("kept %v", rep.Kept)
	}

	// The LLM hears of it in the next request.
	if rep.Outbox != f.l.OutboxPath(st.SessionID, 3) || st.SequenceNumber != 3 || f.load(st).SequenceNumber != 3 {
		t.Errorf("outbox %q, sequence %d", rep.Outbox, st.SequenceNumber)
	}
	notice := "The user undid the file changes of your reply to request 1. Restored to their earlier content: keep.txt, script.sh, data.txt. Removed (they did not exist before): new/deep/file.txt, existing/x.txt. Effects of RUN_COMMAND were not undone. Take the workspace as it is now (READ_FILE what you need) and continue."
	if text := f.outbox(st, 3); !strings.Contains(text, "## Previous Command Results\n"+notice+"\n") {
		t.Errorf("outbox 3 lacks the notice:\n%s", text[strings.Index(text, "=== CONTEXT ==="):])
	}
}

func TestUndoWalksBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	st := f.newSession("versions")
	f.process(st, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\nv1\n[/CREATE_FILE]\n")
	f.process(st, "r2.txt", "[CREATE_FILE path=\"a.txt\"]\nv2\n[/CREATE_FILE]\n[CREATE_FILE path=\"b.txt\"]\nb\n[/CREATE_FILE]\n")
	f.process(st, "r3.txt", "[MESSAGE]\nnothing to change\n[/MESSAGE]\n")

	rep, err := f.l.Undo(st)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sequence != 2 || f.readWS("a.txt") != "v1\n" || f.existsWS("b.txt") {
		t.Errorf("first undo: turn %d, a.txt %q, b.txt there: %v", rep.Sequence, f.readWS("a.txt"), f.existsWS("b.txt"))
	}
	rep, err = f.l.Undo(st)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sequence != 1 || f.existsWS("a.txt") {
		t.Errorf("second undo: turn %d, a.txt there: %v", rep.Sequence, f.existsWS("a.txt"))
	}
	seq := st.SequenceNumber
	_, err = f.l.Undo(st)
	if err == nil || !strings.Contains(err.Error(), "has no file changes left to undo") || hint.Of(err) == "" {
		t.Errorf("third undo: %v", err)
	}
	if st.SequenceNumber != seq || exists(f.l.OutboxPath(st.SessionID, seq+1)) {
		t.Error("a failed undo wrote a new request")
	}
	// The session goes on from the undone state.
	f.process(st, "r4.txt", "[CREATE_FILE path=\"a.txt\"]\nv3\n[/CREATE_FILE]\n")
	if f.readWS("a.txt") != "v3\n" {
		t.Error("the reply after the undos was not applied")
	}
}

// TestUndoKeepsLaterWork: files changed after the turn are saved aside
// before they are put back.
func TestUndoKeepsLaterWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t, runner.Options{})
	f.writeWS("old.txt", "original old\n")
	f.writeWS("same.txt", "same\n")
	st := f.newSession("notes")
	f.process(st, "r1.txt", "[CREATE_FILE path=\"notes.txt\"]\nfrom the llm\n[/CREATE_FILE]\n[DELETE_FILE path=\"old.txt\"]\n[CREATE_FILE path=\"same.txt\"]\nsame too\n[/CREATE_FILE]\n")
	f.writeWS("notes.txt", "the person's notes\n")
	f.writeWS("old.txt", "the person's old\n")

	rep, err := f.l.Undo(st)
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
	t.Parallel()
	f := newFixture(t, runner.Options{})
	st := f.newSession("finish")
	f.process(st, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\na\n[/CREATE_FILE]\n[DONE]\nDone.\n[/DONE]\n")
	rep, err := f.l.Undo(st)
	if err != nil {
		t.Fatal(err)
	}
	saved := f.load(st)
	if saved.IsComplete || saved.Summary != "" || saved.SequenceNumber != 2 || rep.Outbox != f.l.OutboxPath(st.SessionID, 2) || f.existsWS("a.txt") {
		t.Errorf("after undo: complete %v, summary %q, sequence %d, outbox %q", saved.IsComplete, saved.Summary, saved.SequenceNumber, rep.Outbox)
	}
}

func TestUndoRefusedWhileUnfinished(t *testing.T) {
	t.Parallel()
	pol, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, runner.Options{})
	st := f.newSession("clean")
	f.process(st, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\na\n[/CREATE_FILE]\n")
	out, err := f.tryProcess(st, "r2.txt", "[RUN_COMMAND]\nrm -rf a.txt\n[/RUN_COMMAND]\n", engine.Options{Policy: pol})
	if err != nil || out.Engine.Waiting == nil {
		t.Fatalf("the turn does not wait: %v", err)
	}
	_, err = f.l.Undo(st)
	if err == nil || !strings.Contains(err.Error(), "is in the middle of applying a reply") {
		t.Errorf("undo: %v", err)
	}
	if f.readWS("a.txt") != "a\n" {
		t.Error("undo changed files while a turn was unfinished")
	}
}

func TestLog(t *testing.T) {
	t.Parallel()
	pol, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, runner.Options{})
	f.writeWS("b.txt", "b1\nb2\n")
	st := f.newSession("log")
	f.process(st, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\n1\n2\n[/CREATE_FILE]\n[RUN_COMMAND]\nexit 1\n[/RUN_COMMAND]\n")
	f.process(st, "r2.txt", `[EDIT_FILE path="a.txt"]
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
	if _, err := f.l.Undo(st); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tryProcess(st, "r3.txt", "[RUN_COMMAND]\nrm -rf a.txt\n[/RUN_COMMAND]\n", engine.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}

	turns, err := f.l.Log(st)
	if err != nil {
		t.Fatal(err)
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
		got = append(got, entry{ti.Sequence, ti.Reply, ti.Commands, ti.Failed, fmt.Sprint(ti.Files), ti.Undone, ti.Finished})
	}
	want := []entry{
		{1, "r1.txt", 2, 1, "[{a.txt created 2 0}]", false, true},
		{2, "r2.txt", 4, 0, "[{a.txt edited 1 1} {b.txt deleted 0 2} {c.txt created and deleted 1 1}]", true, true},
		{4, "r3.txt", 1, 0, "[]", false, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("log:\n%+v\nwant\n%+v", got, want)
	}
}
