package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/session"
)

func defaultPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// approver answers approval questions as a person at the terminal would,
// and remembers what it was asked.
type approver struct {
	answer engine.Answer
	reason string
	err    error

	mu    sync.Mutex
	asked []string
}

func (a *approver) Approve(ctx context.Context, c command.Command, v policy.Verdict) (engine.Answer, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if v.Decision != policy.Ask {
		return engine.Reject, "", errors.New("asked about a command the policy does not ask about: " + c.Command)
	}
	a.asked = append(a.asked, c.Command)
	return a.answer, a.reason, a.err
}

func (a *approver) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asked)
}

func TestPolicyDenies(t *testing.T) {
	t.Parallel()
	pol := defaultPolicy(t)
	h := newHarness(t, engine.Options{Policy: pol, Approver: &approver{answer: engine.Approve}})
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
	want := session.Pending{Sequence: 1, Index: 1, Command: "rm -rf junk", Reason: v.Reason, Rule: v.Rule}
	if out.Waiting == nil || *out.Waiting != want {
		t.Fatalf("Waiting %+v, want %+v", out.Waiting, want)
	}
	if h.st.Pending == nil || *h.st.Pending != want {
		t.Errorf("State.Pending %+v, want %+v", h.st.Pending, want)
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
		decision session.Record
		junk     bool // junk/ is still there afterwards
		status   command.Status
		summary  string
	}{
		{
			name:     "approved",
			decision: session.Record{Kind: session.Decision, Index: 1, Approved: true},
			status:   command.OK,
			summary:  "Ran 'rm -rf junk' (exit code 0)",
		},
		{
			name:     "denied with a reason",
			decision: session.Record{Kind: session.Decision, Index: 1, Reason: "keep the junk"},
			junk:     true,
			status:   command.Denied,
			summary:  "Not run: the person denied 'rm -rf junk': keep the junk. Find another way, or explain in a MESSAGE why it is needed",
		},
		{
			name:     "denied without a reason",
			decision: session.Record{Kind: session.Decision, Index: 1},
			junk:     true,
			status:   command.Denied,
			summary:  "Not run: the person denied 'rm -rf junk'. Find another way, or explain in a MESSAGE why it is needed",
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
			if out.Waiting != nil || h.st.Pending != nil {
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

func TestApprover(t *testing.T) {
	t.Parallel()
	reply := []command.Command{
		run("rm -rf junk"),
		run("touch between.txt"),
		run("rm -rf junk2"),
	}
	cases := []struct {
		name     string
		answer   engine.Answer
		reason   string
		asked    int
		statuses string // of the results present
		waiting  bool
		junkGone bool
	}{
		{name: "approve", answer: engine.Approve, asked: 2, statuses: "ooo", junkGone: true},
		{name: "approve all like it", answer: engine.ApproveAll, asked: 1, statuses: "ooo", junkGone: true},
		{name: "reject", answer: engine.Reject, reason: "no", asked: 2, statuses: "dod"},
		{name: "wait", answer: engine.Wait, asked: 1, statuses: "", waiting: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := &approver{answer: tc.answer, reason: tc.reason}
			h := newHarness(t, engine.Options{Policy: defaultPolicy(t), Approver: a})
			h.write("junk/file", "x")
			h.write("junk2/file", "x")
			out := h.apply(reply...)
			var got strings.Builder
			for _, r := range out.Results {
				got.WriteByte(string(r.Status)[0])
			}
			if got.String() != tc.statuses {
				t.Errorf("statuses %q, want %q:%s", got.String(), tc.statuses, summaries(out.Results))
			}
			if q := a.questions(); len(q) != tc.asked || q[0] != "rm -rf junk" {
				t.Errorf("asked %q, want %d questions", q, tc.asked)
			}
			if (out.Waiting != nil) != tc.waiting {
				t.Errorf("Waiting %+v", out.Waiting)
			}
			if h.exists("junk/file") == tc.junkGone || h.exists("junk2/file") == tc.junkGone {
				t.Errorf("junk there: %v, junk2 there: %v; want gone: %v", h.exists("junk/file"), h.exists("junk2/file"), tc.junkGone)
			}
			if h.exists("between.txt") == tc.waiting {
				t.Errorf("between.txt exists: %v while waiting: %v", h.exists("between.txt"), tc.waiting)
			}
		})
	}
}

func TestRejectReasonReachesLLM(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{Policy: defaultPolicy(t), Approver: &approver{answer: engine.Reject, reason: "use git clean instead"}})
	r := h.apply(run("rm -rf build")).Results[0]
	want := "Not run: the person denied 'rm -rf build': use git clean instead. Find another way, or explain in a MESSAGE why it is needed"
	if r.Status != command.Denied || r.Summary != want {
		t.Errorf("%s %q\nwant denied %q", r.Status, r.Summary, want)
	}
}

// TestApproveAllLasts: "approve all like it" is kept in the session state,
// so the next turn runs such commands without asking.
func TestApproveAllLasts(t *testing.T) {
	t.Parallel()
	pol := defaultPolicy(t)
	a := &approver{answer: engine.ApproveAll}
	h := newHarness(t, engine.Options{Policy: pol, Approver: a})
	h.apply(run("rm -rf junk"))
	for _, rule := range pol.Check("rm -rf junk").Rules {
		if !slices.Contains(h.st.ApprovedRules, rule) {
			t.Errorf("ApprovedRules %q lack %q", h.st.ApprovedRules, rule)
		}
	}
	// The next turn, with nobody to ask.
	h.nextTurn()
	h.opts.Approver = nil
	h.write("other/file", "x")
	out := h.apply(run("rm -rf other"), run("rm -r other2"))
	if out.Waiting != nil || out.Results[0].Status != command.OK || h.exists("other/file") {
		t.Errorf("a command like an approved one was not run: waiting %+v%s", out.Waiting, summaries(out.Results))
	}
	if len(a.questions()) != 1 {
		t.Errorf("asked %q", a.questions())
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
	h.record(session.Record{Kind: session.Decision, Index: 0, Approved: true, All: true})
	out := h.resume()
	if out.Waiting != nil || h.exists("junk/file") || h.exists("junk2/file") {
		t.Errorf("waiting %+v%s", out.Waiting, summaries(out.Results))
	}
	if len(h.st.ApprovedRules) == 0 {
		t.Error("the approval for all like it is not in the session state")
	}
}

func TestApproverError(t *testing.T) {
	t.Parallel()
	broken := errors.New("terminal went away")
	h := newHarness(t, engine.Options{Policy: defaultPolicy(t), Approver: &approver{err: broken}})
	h.write("junk/file", "x")
	_, err := h.applyCtx(context.Background(), askReply...)
	if !errors.Is(err, broken) {
		t.Errorf("Apply returned %v, want the approver's error", err)
	}
	if !h.exists("junk/file") || h.exists("after.txt") {
		t.Error("commands ran although the question was not answered")
	}
}

// TestAnswerSurvivesCrash: the person's answer is journaled before the
// command starts, so a crash in between does not ask again.
func TestAnswerSurvivesCrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{Policy: defaultPolicy(t), Approver: &approver{answer: engine.Approve}})
	h.write("junk/file", "x")
	h.apply(run("rm -rf junk"), create("after.txt", "after\n"))
	if got := h.kinds(); got != "begin decision start result apply result" {
		t.Fatalf("journal: %s", got)
	}
	h.crashAfter(2)
	h.write("junk/file", "x")
	h.remove("after.txt")
	never := &approver{err: errors.New("asked again after the answer was journaled")}
	h.opts.Approver = never
	out := h.resume()
	if out.Results[0].Status != command.OK || h.exists("junk/file") || !h.exists("after.txt") {
		t.Errorf("resumed:%s", summaries(out.Results))
	}
}

// TestApproveAllSurvivesCrash: "approve all like it" given during a turn
// still covers the rest of that turn when courier dies and the turn is
// finished from the journal (the session state was not saved yet).
func TestApproveAllSurvivesCrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{Policy: defaultPolicy(t), Approver: &approver{answer: engine.ApproveAll}})
	h.write("junk/file", "x")
	h.write("junk2/file", "x")
	h.apply(run("rm -rf junk"), run("true"), run("rm -rf junk2"))
	if got := h.kinds(); got != "begin decision start result start result start result" {
		t.Fatalf("journal: %s", got)
	}
	h.crashAfter(4)
	h.write("junk2/file", "x")
	h.st.ApprovedRules = nil
	h.opts.Approver = nil
	out := h.resume()
	if out.Waiting != nil || h.exists("junk2/file") {
		t.Errorf("asked again about a command like one approved for all: waiting %+v%s", out.Waiting, summaries(out.Results))
	}
}
