package runner_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/runner"
)

func opID(c command.Command, _ int) string { return c.ID }

// A run killed right after its approval was journaled (before the approved
// command ran) still says it waits, but the answer is given: a resume
// without an answer finishes it, and a new answer is refused as one for a
// run that waits on nothing.
func TestResumeRunAfterTheAnswerWasJournaled(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.paths.Workspace, "old", "x.txt"), "x\n")
	cmds := []command.Command{
		{Type: command.RunCommand, ID: "clean", Command: "rm -rf old"},
		{Type: command.CreateFile, ID: "after", Path: "after.txt", Content: "after\n"},
	}
	ctx := context.Background()
	rep, err := f.r.StartRun(ctx, cmds, runner.RunOptions{Task: "clean up", Name: "ops.json", Hash: history.Hash("ops")})
	if err != nil || rep.Paused == nil {
		t.Fatalf("the run did not pause: %+v, %v", rep, err)
	}
	if _, err := f.r.ResumeRun(ctx, rep.ID, nil, opID); !errors.As(err, new(*runner.AnswerNeededError)) {
		t.Fatalf("a resume without an answer of a waiting run: %v", err)
	}
	turn, err := f.store.OpenTurn(rep.ID, rep.Paused.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	if err := turn.Append(history.Record{Kind: history.RecordDecision, Index: rep.Paused.Index, Approved: true}); err != nil {
		t.Fatal(err)
	}
	turn.Close()

	_, err = f.r.ResumeRun(ctx, rep.ID, &runner.RunDecision{Operation: "clean", Approved: false}, opID)
	if !errors.As(err, new(*runner.NothingWaitsError)) {
		t.Fatalf("a second answer was not refused: %v", err)
	}
	if !exists(filepath.Join(f.paths.Workspace, "old", "x.txt")) {
		t.Fatal("the refused answer ran something")
	}
	rep, err = f.r.ResumeRun(ctx, rep.ID, nil, opID)
	if err != nil || rep.Paused != nil {
		t.Fatalf("the run was not finished: %+v, %v", rep, err)
	}
	if exists(filepath.Join(f.paths.Workspace, "old")) || !exists(filepath.Join(f.paths.Workspace, "after.txt")) {
		t.Error("the journaled approval was not carried out")
	}
	if len(rep.Results) != 2 || !rep.Results[0].Success() || rep.From != 0 {
		t.Errorf("results %+v from %d", rep.Results, rep.From)
	}
}
