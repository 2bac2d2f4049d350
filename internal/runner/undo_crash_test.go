package runner_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/runner"
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
	st.Undoing = &history.Undoing{Turn: 2, Below: 1}
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
