package engine_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/shell"
)

// crashReply changes one file three times, the last two with line ranges
// that would do damage if made twice, then creates another file. The four
// changes are one run, made together: the journal is the begin record,
// the four apply records, then the four results (9 records).
var crashReply = []command.Command{
	create("counter.txt", "1\n2\n3\n4\n5\n"),
	lines("counter.txt", 2, 2, "two\nzwei\n"),
	lines("counter.txt", 4, 4, "four\n"),
	create("after.txt", "after\n"),
}

const counterFinal = "1\ntwo\nzwei\n3\nfour\n5\n"

// TestResumeFileChanges simulates courier dying at each interesting point
// of a reply that changes files: the journal is cut back to what was on
// disk at that moment and the workspace set as it was, then the turn is
// resumed. Every change must be made exactly once.
func TestResumeFileChanges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		keep int // journal records that reached the disk
		// counter is counter.txt at the crash (gone: missing); after.txt
		// is always missing.
		counter string
		// tail is written after the kept records (a torn line).
		tail     string
		temp     bool // a temporary file of an unfinished write is left
		want     string
		statuses string
	}{
		{name: "nothing but the begin record", keep: 1, counter: gone, want: counterFinal, statuses: "oooo"},
		{name: "run journaled, nothing made", keep: 5, counter: gone, want: counterFinal, statuses: "oooo"},
		{name: "run journaled, half written", keep: 5, counter: gone, temp: true, want: counterFinal, statuses: "oooo"},
		{name: "run made but for the last file", keep: 5, counter: counterFinal, want: counterFinal, statuses: "oooo"},
		// Not what a run leaves (it writes each file once), but the
		// content alone must still tell which changes happened.
		{name: "an earlier version of the run on disk", keep: 5, counter: "1\ntwo\nzwei\n3\n4\n5\n", want: counterFinal, statuses: "oooo"},
		{name: "run made, two results recorded", keep: 7, counter: counterFinal, want: counterFinal, statuses: "oooo"},
		{name: "run made, all but one result recorded", keep: 8, counter: counterFinal, want: counterFinal, statuses: "oooo"},
		{name: "torn last line", keep: 5, counter: gone, tail: `{"kind":"result","index":1,"at":"2026-01-0`, want: counterFinal, statuses: "oooo"},
		{name: "torn apply record", keep: 3, counter: gone, tail: `{"kind":"apply","index":2,"at":"2026-01-0`, want: counterFinal, statuses: "oooo"},
		{
			// Which of the run's changes of it were made can no longer be
			// told: each is left as it is, and said so.
			name: "file changed by something else", keep: 5, counter: "edited by hand\n",
			want: "edited by hand\n", statuses: "iiio",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, engine.Options{})
			h.apply(crashReply...)
			h.crashAfter(tc.keep)
			h.appendJournal(tc.tail)
			h.remove("after.txt")
			if tc.counter == gone {
				h.remove("counter.txt")
			} else {
				h.write("counter.txt", tc.counter)
			}
			if tc.temp {
				h.write(".courier-tmp-counter.txt-1700000000", "1\n2\n")
			}
			out := h.resume()
			var got strings.Builder
			for _, r := range out.Results {
				got.WriteByte(string(r.Status)[0])
			}
			if got.String() != tc.statuses {
				t.Errorf("statuses %s, want %s:%s", got.String(), tc.statuses, summaries(out.Results))
			}
			if text := h.read("counter.txt"); text != tc.want {
				t.Errorf("counter.txt is\n%q\nwant\n%q%s", text, tc.want, summaries(out.Results))
			}
			if h.read("after.txt") != "after\n" {
				t.Error("the command after the crash point was not carried out")
			}
			if h.exists(".courier-tmp-counter.txt-1700000000") {
				t.Error("the temporary file of the interrupted write is still there")
			}
			checkJournal(t, h, len(crashReply))
		})
	}
}

// checkJournal checks that a finished turn's journal reads back whole, with
// one result for each command.
func checkJournal(t *testing.T, h *harness, n int) {
	t.Helper()
	data, err := os.ReadFile(h.journal())
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' || strings.ContainsRune(string(data), 0) {
		t.Errorf("journal is not whole lines:\n%q", data)
	}
	results := map[int]bool{}
	for _, r := range h.records() {
		if r.Kind == history.RecordResult {
			results[r.Index] = true
		}
	}
	if len(results) != n {
		t.Errorf("journal has results for %d commands, want %d: %s", len(results), n, h.kinds())
	}
}

func TestResumeChangeInterruptedMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.apply(crashReply...)
	h.crashAfter(4)
	h.write("counter.txt", "edited by hand\n")
	out := h.resume()
	r := out.Results[1]
	want := "Change to 'counter.txt' was interrupted and the file has since been changed by something else; it was left as it is"
	if r.Status != command.Interrupted || r.Summary != want {
		t.Errorf("%s %q\nwant interrupted %q", r.Status, r.Summary, want)
	}
}

// TestResumeDelete covers a DELETE_FILE caught by a crash.
func TestResumeDelete(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		old    string // old.txt at the crash (gone: missing)
		status command.Status
		want   string // old.txt afterwards
	}{
		{"journaled, not made", "bye\n", command.OK, gone},
		{"made, not recorded", gone, command.OK, gone},
		{"recreated by something else", "new content\n", command.Interrupted, "new content\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, engine.Options{})
			h.write("old.txt", "bye\n")
			h.apply(del("old.txt"))
			h.crashAfter(2)
			if tc.old != gone {
				h.write("old.txt", tc.old)
			}
			out := h.resume()
			if r := out.Results[0]; r.Status != tc.status {
				t.Errorf("%s %q, want %s", r.Status, r.Summary, tc.status)
			}
			if tc.want == gone && h.exists("old.txt") {
				t.Error("old.txt is still there")
			}
			if tc.want != gone && h.read("old.txt") != tc.want {
				t.Errorf("old.txt is %q, want %q", h.read("old.txt"), tc.want)
			}
		})
	}
}

// TestResumeTwice stands for courier dying again while it finishes a turn:
// a journal whose last record lost only its newline is resumed, and then
// resumed once more. No change may be made twice.
func TestResumeTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.apply(crashReply...)
	h.crashAfter(4)
	data, err := os.ReadFile(h.journal())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.journal(), data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	h.write("counter.txt", "1\n2\n3\n4\n5\n")
	h.remove("after.txt")
	h.resume()
	h.resume()
	if text := h.read("counter.txt"); text != counterFinal {
		t.Errorf("counter.txt is\n%q\nwant\n%q", text, counterFinal)
	}
	checkJournal(t, h, len(crashReply))
}

// TestResumeStartedCommand: a RUN_COMMAND that was started but has no
// result is reported interrupted and not run again, and whatever it left
// running is stopped.
func TestResumeStartedCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.apply(run("echo run >> count.txt"), create("after.txt", "after\n"))
	if h.kinds() != "begin start result apply result" {
		t.Fatalf("journal: %s", h.kinds())
	}
	h.crashAfter(2)
	h.remove("after.txt")
	out := h.resume()
	r := out.Results[0]
	want := "Command 'echo run >> count.txt' was interrupted (courier stopped while it ran); it was not run again"
	if r.Status != command.Interrupted || r.Summary != want || r.Command != "echo run >> count.txt" {
		t.Errorf("%s %q (command %q)\nwant interrupted %q", r.Status, r.Summary, r.Command, want)
	}
	if n := h.lineCount("count.txt"); n != 1 {
		t.Errorf("the command ran %d times", n)
	}
	if !h.exists("after.txt") {
		t.Error("the command after the interrupted one was not carried out")
	}
}

func TestResumeStopsLeftoverProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	// The journal of a courier that died while 'sleep 600' ran.
	cmds := []command.Command{run("sleep 600"), create("after.txt", "after\n")}
	in := input(cmds)
	h.record(history.Record{Kind: history.RecordBegin, ReplyHash: in.Hash, ReplyFile: in.Name, Commands: cmds})
	h.record(history.Record{Kind: history.RecordStart, Index: 0})
	// What the command left running carries its tag.
	leftover := exec.Command("sleep", "600")
	leftover.Env = append(os.Environ(), shell.TagVar+"="+h.st.SessionID+"/1/1")
	if err := leftover.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- leftover.Wait() }()
	t.Cleanup(func() { leftover.Process.Kill() })
	out := h.resume()
	r := out.Results[0]
	want := "Command 'sleep 600' was interrupted (courier stopped while it ran); it was not run again, and the process it left running was stopped"
	if r.Status != command.Interrupted || r.Summary != want {
		t.Errorf("%s %q\nwant interrupted %q", r.Status, r.Summary, want)
	}
	if err := <-exited; err == nil {
		t.Error("the leftover process exited normally; it should have been killed")
	}
	if !h.exists("after.txt") {
		t.Error("the command after the interrupted one was not carried out")
	}
}

func TestResumeFinishedTurnRunsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	first := h.apply(run("echo run >> count.txt"), lines("count.txt", 1, 1, "edited\nrun\n"))
	again := h.resume()
	if n := h.lineCount("count.txt"); n != 2 {
		t.Errorf("count.txt has %d lines after resuming a finished turn, want 2", n)
	}
	if summaries(again.Results) != summaries(first.Results) {
		t.Errorf("resumed results%s\nwant%s", summaries(again.Results), summaries(first.Results))
	}
	// Applying the same reply again is the same as resuming it.
	out := h.apply(run("echo run >> count.txt"), lines("count.txt", 1, 1, "edited\nrun\n"))
	if n := h.lineCount("count.txt"); n != 2 || summaries(out.Results) != summaries(first.Results) {
		t.Errorf("re-applying the same reply: count.txt has %d lines, results%s", n, summaries(out.Results))
	}
}

func TestApplyAnotherReplyRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.apply(create("a.txt", "a\n"))
	_, err := h.applyCtx(context.Background(), create("b.txt", "b\n"))
	var busy *engine.BusyTurnError
	if !errors.As(err, &busy) || busy.Reply != "reply.txt" || busy.Sequence != 1 {
		t.Errorf("error %v, want one naming the reply being applied", err)
	}
	if h.exists("b.txt") {
		t.Error("the other reply was carried out")
	}
}

func TestResumeWithoutTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	_, err := h.engine().Resume(context.Background(), h.st)
	if !errors.Is(err, engine.ErrNoTurn) {
		t.Errorf("error %v, want ErrNoTurn", err)
	}
	if _, ok, err := h.store.Unfinished(h.st); ok || err != nil {
		t.Errorf("Unfinished: %v, %v; want none", ok, err)
	}
	h.apply(create("a.txt", "a\n"))
	begin, ok, err := h.store.Unfinished(h.st)
	if !ok || err != nil || begin.ReplyFile != "reply.txt" || len(begin.Commands) != 1 {
		t.Errorf("Unfinished after a turn: %+v, %v, %v", begin, ok, err)
	}
	h.nextTurn()
	if _, err := h.engine().Resume(context.Background(), h.st); !errors.Is(err, engine.ErrNoTurn) {
		t.Errorf("error %v for the next request, want ErrNoTurn", err)
	}
}

// TestCancelDuringCommand is Ctrl-C while a command runs: the command is
// stopped and recorded interrupted, Apply returns the context's error, and
// Resume goes on with the next command without running it again.
func TestCancelDuringCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	cmds := []command.Command{
		run("echo run >> runs.txt; touch started; sleep 600"),
		create("after.txt", "after\n"),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type applied struct {
		out engine.Outcome
		err error
	}
	done := make(chan applied, 1)
	go func() {
		out, err := h.applyCtx(ctx, cmds...)
		done <- applied{out, err}
	}()
	waitFor(t, h.path("started"))
	cancel()
	res := <-done
	if !errors.Is(res.err, context.Canceled) {
		t.Errorf("Apply returned %v, want context.Canceled", res.err)
	}
	if h.exists("after.txt") {
		t.Error("the command after the cancelled one was carried out")
	}
	out := h.resume()
	r := out.Results[0]
	if r.Status != command.Interrupted || !strings.HasPrefix(r.Summary, "Command 'echo run >> runs.txt; touch started; sleep 600' was stopped by the person (Ctrl-C) after ") {
		t.Errorf("%s %q, want interrupted by Ctrl-C", r.Status, r.Summary)
	}
	if out.Results[1].Status != command.OK || !h.exists("after.txt") {
		t.Errorf("the next command: %s %q", out.Results[1].Status, out.Results[1].Summary)
	}
	if n := h.lineCount("runs.txt"); n != 1 {
		t.Errorf("the cancelled command ran %d times", n)
	}
}

// observer records what an Observer hears.
type observer struct {
	mu     sync.Mutex
	events []string
}

func (o *observer) Started(i int, c command.Command) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, "start "+string(c.Type))
}

func (o *observer) Finished(i int, c command.Command, r command.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, "finish "+string(c.Type)+" "+string(r.Status))
}

func (o *observer) take() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := strings.Join(o.events, ", ")
	o.events = nil
	return s
}

func TestObserver(t *testing.T) {
	t.Parallel()
	obs := &observer{}
	h := newHarness(t, engine.Options{Observer: obs})
	h.apply(create("a.txt", "a\n"), run("exit 1"), create("b.txt", "b\n"))
	if got, want := obs.take(), "start CREATE_FILE, finish CREATE_FILE ok, start RUN_COMMAND, finish RUN_COMMAND failed, start CREATE_FILE, finish CREATE_FILE ok"; got != want {
		t.Errorf("events\n  %s\nwant\n  %s", got, want)
	}
	// Resuming after the second command reports the recorded results and
	// starts only what was left.
	h.crashAfter(5)
	h.remove("b.txt")
	h.resume()
	if got, want := obs.take(), "finish CREATE_FILE ok, finish RUN_COMMAND failed, start CREATE_FILE, finish CREATE_FILE ok"; got != want {
		t.Errorf("events on resume\n  %s\nwant\n  %s", got, want)
	}
}
