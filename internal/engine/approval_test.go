package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/policy"
)

func defaultPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPolicyDenies(t *testing.T) {
	t.Parallel()
	pol := defaultPolicy(t)
	h := newHarness(t, engine.Options{Policy: pol})
	out := h.apply(run("sudo touch root.txt"), run("touch after.txt"))
	r := out.Results[0]
	want := "Not run: " + pol.Check("sudo touch root.txt").Reason + ". Do the task without it, or ask the person to run it themselves (MESSAGE)"
	if r.Status != command.Denied || r.Summary != want || r.Command != "sudo touch root.txt" {
		t.Errorf("%s %q\nwant denied %q", r.Status, r.Summary, want)
	}
	if !strings.Contains(r.Summary, "sudo") {
		t.Errorf("the reason does not name the program: %q", r.Summary)
	}
	if h.exists("root.txt") {
		t.Error("the denied command ran")
	}
	if !h.exists("after.txt") {
		t.Error("the command after the denied one did not run")
	}
}

// askReply has a command the default policy asks about between two that
// it allows.
var askReply = []command.Command{
	create("before.txt", "before\n"),
	run("rm -rf junk"),
	create("after.txt", "after\n"),
}

func TestAskWithoutApproverWaits(t *testing.T) {
	t.Parallel()
	pol := defaultPolicy(t)
	h := newHarness(t, engine.Options{Policy: pol})
	h.write("junk/file", "x")
	out := h.apply(askReply...)
	v := pol.Check("rm -rf junk")
	want := history.Pending{Sequence: 1, Index: 1, Command: "rm -rf junk", Reason: v.Reason, Rule: v.Rule, Covers: v.Covers()}
	if out.Waiting == nil || *out.Waiting != want {
		t.Fatalf("Waiting %+v, want %+v", out.Waiting, want)
	}
	if len(out.Results) != 1 || !h.exists("before.txt") {
		t.Errorf("results before the question:%s", summaries(out.Results))
	}
	if !h.exists("junk/file") || h.exists("after.txt") {
		t.Error("a command at or after the question was carried out")
	}
	if got := h.kinds(); got != "begin apply result" {
		t.Errorf("journal %q; the question must leave no trace to undo", got)
	}
	// Resuming without an answer asks again and does nothing more.
	again := h.resume()
	if again.Waiting == nil || *again.Waiting != want || len(again.Results) != 1 || h.exists("after.txt") {
		t.Errorf("resumed without an answer: waiting %+v,%s", again.Waiting, summaries(again.Results))
	}
}

// TestDecisionInJournal answers the waiting question the way 'courier
// approve' and 'courier deny' do, with a record in the turn's journal, and
// resumes.
func TestDecisionInJournal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		decision history.Record
		junk     bool // junk/ is still there afterwards
		status   command.Status
		summary  string
	}{
		{
			name:     "approved",
			decision: history.Record{Kind: history.RecordDecision, Index: 1, Approved: true},
			status:   command.OK,
			summary:  "Ran 'rm -rf junk' (exit code 0) (approved by the user)",
		},
		{
			name:     "denied with a reason",
			decision: history.Record{Kind: history.RecordDecision, Index: 1, Reason: "keep the junk"},
			junk:     true,
			status:   command.Denied,
			summary:  "Not run: 'rm -rf junk' was denied by the user: keep the junk. Find another way, or explain in a MESSAGE why it is needed",
		},
		{
			name:     "denied without a reason",
			decision: history.Record{Kind: history.RecordDecision, Index: 1},
			junk:     true,
			status:   command.Denied,
			summary:  "Not run: 'rm -rf junk' was denied by the user. Find another way, or explain in a MESSAGE why it is needed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, engine.Options{Policy: defaultPolicy(t)})
			h.write("junk/file", "x")
			if out := h.apply(askReply...); out.Waiting == nil {
				t.Fatal("the turn did not wait")
			}
			h.record(tc.decision)
			out := h.resume()
			if out.Waiting != nil {
				t.Errorf("still waiting: %+v", out.Waiting)
			}
			if len(out.Results) != 3 {
				t.Fatalf("results:%s", summaries(out.Results))
			}
			if r := out.Results[1]; r.Status != tc.status || r.Summary != tc.summary {
				t.Errorf("%s %q\nwant %s %q", r.Status, r.Summary, tc.status, tc.summary)
			}
			if h.exists("junk/file") != tc.junk {
				t.Errorf("junk/file exists: %v, want %v", !tc.junk, tc.junk)
			}
			if h.read("before.txt") != "before\n" || !h.exists("after.txt") {
				t.Error("the commands around the question were not carried out once each")
			}
		})
	}
}

// TestApproveAllLasts: "approve all like it" is kept in the session state,
// so the next turn runs such commands without asking.
func TestApproveAllLasts(t *testing.T) {
	t.Parallel()
	pol := defaultPolicy(t)
	h := newHarness(t, engine.Options{Policy: pol})
	if out := h.apply(run("rm -rf junk")); out.Waiting == nil {
		t.Fatal("the turn did not wait")
	}
	h.record(history.Record{Kind: history.RecordDecision, Index: 0, Approved: true, All: true})
	out := h.resume()
	for _, rule := range pol.Check("rm -rf junk").Rules {
		if !slices.Contains(out.ApprovedRules, rule) {
			t.Errorf("ApprovedRules %q lack %q", out.ApprovedRules, rule)
		}
	}
	if len(h.st.ApprovedRules) != 0 {
		t.Errorf("the engine changed the session state: %q", h.st.ApprovedRules)
	}
	// The next turn, with the rules committed to the session.
	h.st.ApprovedRules = out.ApprovedRules
	h.nextTurn()
	h.write("other/file", "x")
	out = h.apply(run("rm -rf other"), run("rm -r other2"))
	if out.Waiting != nil || out.Results[0].Status != command.OK || h.exists("other/file") {
		t.Errorf("a command like an approved one was not run: waiting %+v%s", out.Waiting, summaries(out.Results))
	}
}

// TestApproveAllCoversTheShapeShown: "approve all like it" given for
// 'rm -rf junk' does not cover one that brings variables of its own, in
// its text or as a JSON shell operation's env; those are asked about, with
// what they add, and the question carries the env.
func TestApproveAllCoversTheShapeShown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{Policy: defaultPolicy(t)})
	if out := h.apply(run("rm -rf junk")); out.Waiting == nil {
		t.Fatal("the turn did not wait")
	}
	h.record(history.Record{Kind: history.RecordDecision, Index: 0, Approved: true, All: true})
	h.st.ApprovedRules = h.resume().ApprovedRules
	for _, c := range []command.Command{
		run("HOME=/ rm -rf other"),
		{Type: command.RunCommand, Command: "rm -rf other", Env: map[string]string{"HOME": "/", "X": "a b"}},
	} {
		h.nextTurn()
		h.write("other/file", "x")
		out := h.apply(c)
		if out.Waiting == nil || !h.exists("other/file") {
			t.Fatalf("%q %v ran under the approval of 'rm -rf junk' for all like it", c.Command, c.Env)
		}
		if !strings.Contains(out.Waiting.Reason, "the approval of all like it does not cover what it adds: `HOME=/`") {
			t.Errorf("reason %q", out.Waiting.Reason)
		}
		if c.Env != nil && out.Waiting.Env != "HOME=/ X='a b'" {
			t.Errorf("the question's env is %q", out.Waiting.Env)
		}
	}
}

// TestApproveAllFromJournal: 'courier approve --all' writes a decision
// with All set; resuming runs the command and every later one like it.
func TestApproveAllFromJournal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{Policy: defaultPolicy(t)})
	h.write("junk/file", "x")
	h.write("junk2/file", "x")
	if out := h.apply(run("rm -rf junk"), run("rm -rf junk2")); out.Waiting == nil {
		t.Fatal("the turn did not wait")
	}
	h.record(history.Record{Kind: history.RecordDecision, Index: 0, Approved: true, All: true})
	out := h.resume()
	if out.Waiting != nil || h.exists("junk/file") || h.exists("junk2/file") {
		t.Errorf("waiting %+v%s", out.Waiting, summaries(out.Results))
	}
	if len(out.ApprovedRules) == 0 {
		t.Error("the approval for all like it is not in the outcome")
	}
}

// TestApproveAllSurvivesCrash: "approve all like it" given during a turn
// still covers the rest of that turn when courier dies and the turn is
// finished from the journal (the session state was not saved yet).
func TestApproveAllSurvivesCrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{Policy: defaultPolicy(t)})
	h.write("junk/file", "x")
	h.write("junk2/file", "x")
	h.apply(run("rm -rf junk"), run("true"), run("rm -rf junk2"))
	h.record(history.Record{Kind: history.RecordDecision, Index: 0, Approved: true, All: true})
	h.resume()
	if got := h.kinds(); got != "begin decision start result start result start result" {
		t.Fatalf("journal: %s", got)
	}
	h.crashAfter(4)
	h.write("junk2/file", "x")
	out := h.resume()
	if out.Waiting != nil || h.exists("junk2/file") {
		t.Errorf("asked again about a command like one approved for all: waiting %+v%s", out.Waiting, summaries(out.Results))
	}
}
