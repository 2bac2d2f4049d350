package runner_test

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/runner"
)

// TestStatusStates: status tells a program what each session waits for.
func TestStatusStates(t *testing.T) {
	f := newFixture(t)
	f.writeWS("junk/file", "x")
	ws := f.paths.Workspace

	waiting := f.create("waiting")
	info, err := f.r.Status(waiting)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != waiting || info.Task != "waiting" || info.State != runner.StateWaiting || info.Sequence != 1 || info.Complete ||
		info.Request != f.requestPath(waiting, 1) || info.Pending != nil || info.Unfinished != "" || info.Holder != nil || info.Workspace != ws {
		t.Errorf("waiting: %+v", info)
	}

	approval := f.create("approval")
	f.asking(approval)
	info, _ = f.r.Status(approval)
	if info.State != runner.StateAwaitingApproval || info.Pending == nil || *info.Pending != f.pending() || info.Unfinished != "reply.txt" ||
		info.Request != f.requestPath(approval, 1) || info.Complete {
		t.Errorf("awaiting approval: %+v", info)
	}

	applying := f.create("applying")
	crashBeforeCommit(f, applying, "crashed.txt", workReply, true)
	info, _ = f.r.Status(applying)
	if info.State != runner.StateApplying || info.Unfinished != "crashed.txt" || info.Pending != nil || info.Sequence != 1 {
		t.Errorf("applying: %+v", info)
	}

	complete := f.create("complete")
	f.apply(complete, "done.txt", "[DONE]\nAll done.\n[/DONE]\n")
	info, _ = f.r.Status(complete)
	if info.State != runner.StateComplete || !info.Complete || info.Summary != "All done." || info.Request != "" || info.Unfinished != "" {
		t.Errorf("complete: %+v", info)
	}

	// Without an id: the most recently updated session, complete or not.
	if info, err := f.r.Status(""); err != nil || info.ID != complete {
		t.Errorf("latest: %+v, %v", info, err)
	}
	all, errs := f.r.Sessions()
	var ids, states []string
	for _, i := range all {
		ids = append(ids, i.ID)
		states = append(states, i.State)
	}
	if len(errs) != 0 || !slices.Equal(ids, []string{complete, applying, approval, waiting}) ||
		!slices.Equal(states, []string{runner.StateComplete, runner.StateApplying, runner.StateAwaitingApproval, runner.StateWaiting}) {
		t.Errorf("sessions %v %v, errors %v", ids, states, errs)
	}
	if _, err := f.r.Status("0badcafe"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	var bad *history.InvalidIDError
	if _, err := f.r.Status("../etc"); !errors.As(err, &bad) {
		t.Errorf("invalid id: %v", err)
	}
}

// TestStatusNoSession: with no session at all there is nothing to show,
// hold or apply to.
func TestStatusNoSession(t *testing.T) {
	f := newFixture(t)
	if _, err := f.r.Status(""); !errors.Is(err, runner.ErrNoSession) {
		t.Errorf("status: %v", err)
	}
	if _, err := f.r.Hold("", "courier watch"); !errors.Is(err, runner.ErrNoSession) {
		t.Errorf("hold: %v", err)
	}
	id := f.create("done")
	f.apply(id, "r.txt", "[DONE]\nok\n[/DONE]\n")
	// Hold wants an incomplete session; HoldLatest takes any.
	if _, err := f.r.Hold("", "courier watch"); !errors.Is(err, runner.ErrNoSession) {
		t.Errorf("hold with only a complete session: %v", err)
	}
	s, err := f.r.HoldLatest("", "courier undo")
	if err != nil || s.ID() != id || !s.Complete() {
		t.Fatalf("hold latest: %v", err)
	}
	s.Release()
}

// TestStatusHolder: while a run holds a session, status names it and what
// it is doing, and no other run can hold it.
func TestStatusHolder(t *testing.T) {
	f := newFixture(t)
	id := f.create("task")
	s, err := f.r.Hold(id, "courier undo")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := f.r.Status(id)
	if h := info.Holder; h == nil || h.PID != os.Getpid() || h.Command != "courier undo" || h.Doing != "" || h.Since.IsZero() {
		t.Errorf("holder %+v", info.Holder)
	}
	_, err = f.r.Hold(id, "courier watch")
	var locked *history.LockedError
	if !errors.As(err, &locked) || locked.Holder == nil || locked.Holder.Command != "courier undo" {
		t.Errorf("second hold: %v", err)
	}
	s.Release()
	if info, _ := f.r.Status(id); info.Holder != nil {
		t.Errorf("holder %+v after release", info.Holder)
	}

	r, rec := f.runner(nil)
	sv := f.serve(r, id, f.watcher(id))
	waitFor(t, "the watch to wait", func() bool { return len(eventsOf[runner.WaitingForReply](rec)) > 0 })
	info, _ = f.r.Status(id)
	if h := info.Holder; h == nil || h.Command != "courier watch" || h.Doing != "waiting for a reply to request 1" {
		t.Errorf("holder while watching %+v", info.Holder)
	}
	_, err = f.r.Hold(id, "courier process")
	if !errors.As(err, &locked) || locked.Holder == nil || locked.Holder.Doing != "waiting for a reply to request 1" {
		t.Errorf("hold while watched: %v", err)
	}
	sv.cancel()
	sv.wait(t)
	if info, _ := f.r.Status(id); info.Holder != nil {
		t.Errorf("holder %+v after the watch ended", info.Holder)
	}
}
