package runner_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/runner"
)

// A session started without its first snapshot ('courier new --no-watch'
// leaves it to the first turn) still has the first reply's command
// undone byte for byte: the turn reads the workspace before the command
// changes it.
func TestFirstTurnSnapshotsWhatItsCommandChanges(t *testing.T) {
	f := newFixture(t)
	f.writeMode("a.txt", "original\n", 0o640)
	f.writeWS("b/c.txt", "kept\n")
	id, err := f.r.Create("change things", runner.CreateOptions{SnapshotLater: true})
	if err != nil {
		t.Fatal(err)
	}
	before := f.tree()
	f.apply(id, "reply.txt", "[RUN_COMMAND]\necho changed > a.txt && echo more >> b/c.txt && echo new > d.txt\n[/RUN_COMMAND]\n")
	if res := f.load(id).LastResults; len(res) != 1 || !res[0].Success() {
		t.Fatalf("the command failed: %+v", res)
	}
	if got := f.tree()["a.txt"]; !strings.Contains(got, "changed") {
		t.Fatalf("the command did not run: a.txt is %s", got)
	}
	rep, err := f.undo(id)
	if err != nil {
		t.Fatal(err)
	}
	if after := f.tree(); !reflect.DeepEqual(after, before) {
		t.Errorf("workspace after undo:\n%v\nwant\n%v", after, before)
	}
	if !rep.Commands {
		t.Error("the undo did not come from a snapshot")
	}
}

// The description of the machine is probed while the workspace is listed:
// the first request holds it, next to the files the person included, and
// the session keeps it for a new chat.
func TestFirstRequestDescribesTheMachineWithItsPack(t *testing.T) {
	f := newFixture(t)
	f.writeWS("main.go", "package main\n")
	r := runner.New(runner.Config{Paths: f.paths, Limits: f.limits, FrontEnds: f.frontEnds(), Environment: true})
	id, err := r.Create("explain", runner.CreateOptions{Includes: []string{"**"}})
	if err != nil {
		t.Fatal(err)
	}
	text := f.request(id, 1)
	for _, want := range []string{"## Environment\n- Operating system: ", "1 | package main"} {
		if !strings.Contains(text, want) {
			t.Errorf("the first request lacks %q:\n%s", want, text)
		}
	}
	if env := f.load(id).Environment; env == "" || !strings.Contains(text, env) {
		t.Errorf("the session keeps the description %q", env)
	}
}
