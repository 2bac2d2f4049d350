package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
)

// A recorded session (testdata/recorded: the replies an LLM gave to a
// small task on a one-file project) is played through the runner: what the
// person pastes, and how many turns it takes.

// tokenCounter keeps the requests a session writes.
type tokenCounter struct {
	recorder
	tokens, requests int
}

func (c *tokenCounter) RequestWritten(w runner.RequestWritten) {
	if !w.Resumed {
		c.tokens += human.Tokens(w.Text)
		c.requests++
	}
}

// playRecorded runs the replies named in order against a fresh root and
// returns the tokens of every request written and the turns taken.
func playRecorded(tb testing.TB, protocolOnce bool, replies ...string) (tokens, turns int) {
	tb.Helper()
	root := tb.TempDir()
	paths := runner.DefaultPaths(root)
	if err := paths.Ensure(); err != nil {
		tb.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "recorded", "wordcount.py"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths.Workspace, "wordcount.py"), src, 0o644); err != nil {
		tb.Fatal(err)
	}
	d := config.Defaults()
	pol, err := policy.New(d.Policy)
	if err != nil {
		tb.Fatal(err)
	}
	counter := &tokenCounter{}
	r := runner.New(runner.Config{
		Paths:        paths,
		Limits:       runner.Limits{MaxReply: d.MaxReply, ListLimit: d.ListLimit, ReadLines: d.ReadLines},
		Commands:     runner.Commands{Timeout: d.CommandTimeout, MaxOutput: d.MaxOutput, Env: os.Environ(), Policy: pol},
		FrontEnds:    []frontend.FrontEnd{protocol.Tags{}},
		Reporter:     counter,
		ProtocolOnce: protocolOnce,
	})
	id, err := r.Create("count() must split on any whitespace; add unit tests", runner.CreateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range replies {
		text, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
		if err != nil {
			tb.Fatal(err)
		}
		p := filepath.Join(paths.Inbox, name)
		if err := os.WriteFile(p, text, 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := r.ApplyFrom(context.Background(), &inbox.File{Path: p, Inbox: paths.Inbox}, id, "courier process"); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		turns++
	}
	info, err := r.Status(id)
	if err != nil || !info.Complete {
		tb.Fatalf("the recorded session did not complete: %+v, %v", info, err)
	}
	return counter.tokens, turns
}

var fiveTurns = []string{"1.txt", "2.txt", "3.txt", "4.txt", "5.txt"}

// TestRecordedSession checks what the benchmarks below measure: the
// protocol once a chat halves what is pasted, and DONE with the final
// check saves the last turn.
func TestRecordedSession(t *testing.T) {
	every, _ := playRecorded(t, false, fiveTurns...)
	first, _ := playRecorded(t, true, fiveTurns...)
	if ratio := float64(first) / float64(every); ratio > 0.5 {
		t.Errorf("protocol = first pastes %d tokens, every %d: %.2fx, want at most 0.5x", first, every, ratio)
	}
	_, lone := playRecorded(t, false, fiveTurns...)
	_, together := playRecorded(t, false, "1.txt", "2.txt", "3.txt", "4-with-done.txt")
	if together != lone-1 {
		t.Errorf("with DONE after the final check the session took %d turns, with a lone DONE %d", together, lone)
	}
}

// BenchmarkRecordedTokens reports the tokens a person pastes for the
// recorded five-turn session, with the protocol in every request and in
// the first only.
func BenchmarkRecordedTokens(b *testing.B) {
	var every, first int
	for b.Loop() {
		every, _ = playRecorded(b, false, fiveTurns...)
		first, _ = playRecorded(b, true, fiveTurns...)
	}
	b.ReportMetric(float64(every), "tokens-every")
	b.ReportMetric(float64(first), "tokens-first")
	b.ReportMetric(float64(first)/float64(every), "first/every")
}

// BenchmarkRecordedTurns reports the turns of the recorded session with a
// lone DONE and with DONE in the reply that runs the final check.
func BenchmarkRecordedTurns(b *testing.B) {
	var lone, together int
	for b.Loop() {
		_, lone = playRecorded(b, false, fiveTurns...)
		_, together = playRecorded(b, false, "1.txt", "2.txt", "3.txt", "4-with-done.txt")
	}
	b.ReportMetric(float64(lone), "turns-lone-done")
	b.ReportMetric(float64(together), "turns-done-with-check")
}
