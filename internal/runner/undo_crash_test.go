package runner_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/session"
)

// twoTurns applies two replies that change the same files and returns the
// workspace as it was before, after the first and after the second.
func (f *fixture) twoTurns(id string) (before, afterFirst, afterSecond map[string]string) {
	f.t.Helper()
	before = f.tree()
	f.apply(id, "r1.txt", "[CREATE_FILE path=\"a.txt\"]\na1\n[/CREATE_FILE]\n[EDIT_FILE path=\"keep.txt\"]\n<<<<<<< SEARCH\nk\n=======\nk1\n>>>>>>> REPLACE\n[/EDIT_FILE]\n")
	afterFirst = f.tree()
	f.apply(id, "r2.txt", "[CREATE_FILE path=\"a.txt\"]\na2\n[/CREATE_FILE]\n[CREATE_FILE path=\"dir/b.txt\"]\nb\n[/CREATE_FILE]\n[EDIT_FILE path=\"keep.txt\"]\n<<<<<<< SEARCH\nk1\n=======\nk2\n>>>>>>> REPLACE\n[/EDIT_FILE]\n")
	afterSecond = f.tree()
	return before, afterFirst, afterSecond
}

// interruptUndo leaves the session as a courier killed during 'courier
// undo' of the last turn does: the state saved with the undo under way,
// and the files the undo had put back by then.
func (f *fixture) interruptUndo(id string, putBack map[string]string) {
	f.t.Helper()
	st := f.load(id)
	st.Undoing = &session.Undoing{Turn: 2, Below: 1}
	if err := f.store.Save(st); err != nil {
		f.t.Fatal(err)
	}
	for rel, content := range putBack {
		if content == "" {
			if err := os.Remove(f.wsPath(rel)); err != nil {
				f.t.Fatal(err)
			}
			continue
		}
		f.writeWS(rel, content)
	}
}

// TestInterruptedUndoFinishedOnce: whichever command runs next (undo
// again, or process with a reply waiting), it finishes the interrupted
// undo, and exactly one turn is undone.
func TestInterruptedUndoFinishedOnce(t *testing.T) {
	t.Parallel()
	for _, next := range []string{"undo", "process"} {
		for _, tc := range []struct {
			name    string
			putBack map[string]string
		}{
			{"nothing put back yet", nil},
			{"some files put back", map[string]string{"a.txt": "a1\n", "dir/b.txt": ""}},
			{"all files put back", map[string]string{"a.txt": "a1\n", "dir/b.txt": "", "keep.txt": "k1\n"}},
		} {
			t.Run(next+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				f.writeWS("keep.txt", "k\n")
				id := f.create("undo")
				_, afterFirst, _ := f.twoTurns(id)
				f.interruptUndo(id, tc.putBack)
				// A later run loads the state afresh.
				if info, err := f.r.Status(id); err != nil || info.State != runner.StateUndoing {
					t.Errorf("status %+v, %v; want %s", info, err, runner.StateUndoing)
				}
				switch next {
				case "undo":
					rep, err := f.undo(id)
					if err != nil {
						t.Fatal(err)
					}
					if !rep.Resumed || rep.Sequence != 2 {
						t.Errorf("undo reported %+v, want the interrupted undo of turn 2 finished", rep)
					}
				case "process":
					r, rec := f.runner(nil)
					err := f.tryApply(r, id, "r3.txt", "Sequence: 3\n[CREATE_FILE path=\"c.txt\"]\nc\n[/CREATE_FILE]\n")
					refused := eventsOf[runner.ReplyRefused](rec)
					if !isA[*runner.UnappliedError](err) || len(refused) != 1 || !strings.Contains(refused[0].Reason, "answers request 3") {
						t.Errorf("the reply to the request before the undo: %v, %+v", err, refused)
					}
				}
				if got := f.tree(); !reflect.DeepEqual(got, afterFirst) {
					t.Errorf("workspace:\n%v\nwant as after the first turn:\n%v", got, afterFirst)
				}
				saved := f.load(id)
				if saved.SequenceNumber != 4 || saved.Undoing != nil || saved.UndoTop != 1 {
					t.Errorf("state: sequence %d, undoing %v, undo top %d; want 4, none, 1", saved.SequenceNumber, saved.Undoing, saved.UndoTop)
				}
				if text := f.request(id, 4); !strings.Contains(text, "undid the changes of your reply to request 2") {
					t.Error("request 4 lacks the undo notice")
				}
				// The next undo takes back the first turn, and only it.
				rep, err := f.undo(id)
				if err != nil || rep.Sequence != 1 || rep.Resumed {
					t.Errorf("next undo: %+v, %v", rep, err)
				}
			})
		}
	}
}

// TestUndoChainAfterNewTurns: undo walks back one turn at a time, a turn
// that changed nothing included; a turn applied after some undos is the
// next undone, then the walk goes on where it stopped.
func TestUndoChainAfterNewTurns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.create("chain")
	for i := 1; i <= 4; i++ {
		f.apply(id, fmt.Sprintf("r%d.txt", i), fmt.Sprintf("[CREATE_FILE path=\"f%d.txt\"]\n%d\n[/CREATE_FILE]\n", i, i))
	}
	f.apply(id, "msg.txt", "[MESSAGE]\nno files\n[/MESSAGE]\n")
	undo := func(want int) {
		t.Helper()
		rep, err := f.undo(id)
		if err != nil || rep.Sequence != want {
			t.Fatalf("undo: turn %d, %v; want turn %d", rep.Sequence, err, want)
		}
	}
	undo(5)
	undo(4)
	undo(3)
	f.apply(id, "r8.txt", "[CREATE_FILE path=\"f8.txt\"]\n8\n[/CREATE_FILE]\n")
	undo(f.load(id).SequenceNumber - 1)
	undo(2)
	undo(1)
	if _, err := f.undo(id); !isA[*runner.NothingToUndoError](err) {
		t.Errorf("undo with nothing left: %v", err)
	}
	for i := 1; i <= 8; i++ {
		if exists(f.wsPath(fmt.Sprintf("f%d.txt", i))) {
			t.Errorf("f%d.txt is still there", i)
		}
	}
}

// TestSessionOfAnEarlierVersion: a session written before the reply index
// and the undo chain (its state lists the applied replies; its turn keeps
// one file per content) is still served: its replies are recognised, undo
// restores its files, and its next save drops the list from the state.
func TestSessionOfAnEarlierVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.writeWS("a.txt", "new\n")
	const reply = "[EDIT_FILE path=\"a.txt\"]\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n[/EDIT_FILE]\n"
	id := "0badc0de"
	hash := session.Hash([]byte(reply))
	st := &session.State{SessionID: id, Task: "old session", SequenceNumber: 2, Workspace: f.paths.Workspace,
		LastResults: []command.Result{}, ReadFileRequests: []session.ReadRequest{},
		Replies: []session.ReplyRecord{{Hash: hash, Sequence: 1, File: "r1.txt"}}}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.store.Path(id), string(data))
	// The turn's files as an earlier courier left them on disk.
	turn := filepath.Join(f.store.Folder(id), "turns", "0001")
	oldHash, newHash := session.Hash([]byte("old\n")), session.Hash([]byte("new\n"))
	writeFile(t, filepath.Join(turn, "blobs", oldHash), "old\n")
	writeFile(t, filepath.Join(turn, "blobs", newHash), "new\n")
	writeFile(t, filepath.Join(turn, "reply.txt"), reply)
	done := command.Result{Type: command.EditFile, Path: "a.txt", Status: command.OK, Summary: "Edited 'a.txt' (1 search/replace edit)"}
	var journal strings.Builder
	for _, r := range []session.Record{
		{Kind: session.RecordBegin, ReplyHash: hash, ReplyFile: "r1.txt", Commands: []command.Command{{Type: command.EditFile, Path: "a.txt", Edits: []command.Edit{{Search: "old\n", Replace: "new\n"}}}}},
		{Kind: session.RecordChange, Change: &session.Change{Path: "a.txt", Before: oldHash, BeforeMode: 0o644, After: newHash, Done: done}},
		{Kind: session.RecordResult, Result: &done},
	} {
		line, _ := json.Marshal(r)
		journal.Write(append(line, '\n'))
	}
	writeFile(t, filepath.Join(turn, "journal.jsonl"), journal.String())
	writeFile(t, f.requestPath(id, 2), "the outbox of request 2\n")

	r, rec := f.runner(nil)
	if err := f.tryApply(r, id, "again.txt", reply); err != nil {
		t.Fatal(err)
	}
	if refused := eventsOf[runner.ReplyRefused](rec); len(refused) != 1 || !refused[0].Duplicate {
		t.Fatalf("the reply applied by the earlier version: %+v", refused)
	}
	rep, err := f.undo(id)
	if err != nil || rep.Sequence != 1 {
		t.Fatalf("undo: %+v, %v", rep, err)
	}
	if got := f.readWS("a.txt"); got != "old\n" {
		t.Errorf("a.txt is %q after undo", got)
	}
	saved := readFile(t, f.store.Path(id))
	if strings.Contains(saved, "replies") || !strings.Contains(saved, `"format": 2`) {
		t.Errorf("the state after its first save:\n%s", saved)
	}
	if _, ok, err := f.store.FindReply(f.load(id), hash); !ok || err != nil {
		t.Errorf("the reply is no longer recognised after the migration: %v", err)
	}
}
