package engine_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
	"github.com/courier-agent/courier/internal/workspace"
)

// TestMain lets the test binary act as courier's sandbox launcher, as
// courier's own main does, so sandboxed commands run for real.
func TestMain(m *testing.M) { sandboxtest.Main(m) }

// harness is one session in fresh folders: a workspace, a sessions store
// and the state of a session waiting for the reply to its first request.
type harness struct {
	t     *testing.T
	root  string
	dir   string
	store history.Store
	st    *history.State
	opts  engine.Options
}

func newHarness(t *testing.T, opts engine.Options) *harness {
	t.Helper()
	if opts.Observer == nil {
		opts.Observer = unobserved{}
	}
	if opts.Words == nil {
		// The advice in results is worded as the tag protocol's.
		opts.Words = protocol.Tags{}.Words()
	}
	root := t.TempDir()
	dir := filepath.Join(root, "workspace")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A session id of its own keeps the command tags (and so the leftover
	// processes a recovery stops) apart from other tests running at once.
	st := &history.State{SessionID: randomID(t), SequenceNumber: 1, Workspace: dir}
	defaults := config.Defaults()
	if opts.Timeout == 0 {
		opts.Timeout = defaults.CommandTimeout
	}
	if opts.MaxOutput == 0 {
		opts.MaxOutput = defaults.MaxOutput
	}
	return &harness{t: t, root: root, dir: dir, store: history.Store{Dir: filepath.Join(root, "sessions")}, st: st, opts: opts}
}

type unobserved struct{}

func (unobserved) Started(int, command.Command)                  {}
func (unobserved) Finished(int, command.Command, command.Result) {}

func randomID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// engine opens the workspace afresh, as each courier run does.
func (h *harness) engine() *engine.Engine {
	h.t.Helper()
	ws, err := workspace.Open(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	hist, err := h.store.Open(h.st.SessionID, ws, history.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { hist.Close(); ws.Close() })
	return engine.New(ws, hist, h.opts)
}

// input is a reply made of cmds; its hash identifies the command list.
func input(cmds []command.Command) engine.Input {
	raw, _ := json.Marshal(cmds)
	return engine.Input{Hash: history.Hash(string(raw)), Name: "reply.txt", Commands: cmds}
}

// applyCtx applies a reply of cmds to the current request.
func (h *harness) applyCtx(ctx context.Context, cmds ...command.Command) (engine.Outcome, error) {
	return h.engine().Apply(ctx, h.st, input(cmds))
}

func (h *harness) apply(cmds ...command.Command) engine.Outcome {
	h.t.Helper()
	out, err := h.applyCtx(context.Background(), cmds...)
	if err != nil {
		h.t.Fatalf("apply: %v", err)
	}
	if len(out.Results) != len(cmds) && out.Waiting == nil {
		h.t.Fatalf("apply: %d results for %d commands", len(out.Results), len(cmds))
	}
	return out
}

func (h *harness) resume() engine.Outcome {
	h.t.Helper()
	out, err := h.engine().Resume(context.Background(), h.st)
	if err != nil {
		h.t.Fatalf("resume: %v", err)
	}
	return out
}

// nextTurn moves the session on to its next request, as the loop does once
// a turn is committed.
func (h *harness) nextTurn() { h.st.SequenceNumber++ }

func (h *harness) path(rel string) string { return filepath.Join(h.dir, filepath.FromSlash(rel)) }

func (h *harness) write(rel, content string) {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) read(rel string) string {
	h.t.Helper()
	data, err := os.ReadFile(h.path(rel))
	if err != nil {
		h.t.Fatalf("read %s: %v", rel, err)
	}
	return string(data)
}

func (h *harness) exists(rel string) bool {
	_, err := os.Lstat(h.path(rel))
	return err == nil
}

func (h *harness) remove(rel string) {
	h.t.Helper()
	if err := os.Remove(h.path(rel)); err != nil {
		h.t.Fatal(err)
	}
}

// lineCount counts the lines of a workspace file, 0 when it is missing.
func (h *harness) lineCount(rel string) int {
	data, err := os.ReadFile(h.path(rel))
	if err != nil {
		return 0
	}
	return strings.Count(string(data), "\n")
}

func (h *harness) journal() string {
	return filepath.Join(h.store.Folder(h.st.SessionID), "turns", fmt.Sprintf("%04d.jsonl", h.st.SequenceNumber))
}

// records reads the current turn's journal.
func (h *harness) records() []history.Record {
	h.t.Helper()
	turn, err := h.store.ReadTurn(h.st.SessionID, h.st.SequenceNumber)
	if err != nil {
		h.t.Fatal(err)
	}
	return turn.Records
}

// kinds lists the kinds of the current turn's records, e.g. "begin
// apply", leaving out those that say what each command changed in the
// workspace (the turn's order of work is what the tests look at).
func (h *harness) kinds() string {
	var k []string
	for _, r := range h.records() {
		if r.Kind != history.RecordChanged {
			k = append(k, string(r.Kind))
		}
	}
	return strings.Join(k, " ")
}

// crashAfter cuts the current turn's record right after its n-th record
// kinds lists, as if courier had died right after writing it.
func (h *harness) crashAfter(n int) {
	h.t.Helper()
	data, err := os.ReadFile(h.journal())
	if err != nil {
		h.t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	keep := 0
	for k := 0; k < n; keep++ {
		if keep >= len(lines) || lines[keep] == "" {
			h.t.Fatalf("journal has too few records to keep %d", n)
		}
		if !strings.Contains(lines[keep], `"kind":"changed"`) {
			k++
		}
	}
	if err := os.WriteFile(h.journal(), []byte(strings.Join(lines[:keep], "")), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// kept reports whether the session's history keeps a content.
func (h *harness) kept(content string) bool {
	h.t.Helper()
	ws, err := workspace.Open(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	defer ws.Close()
	hist, err := h.store.Open(h.st.SessionID, ws, history.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	defer hist.Close()
	t, err := hist.Turn(h.st.SequenceNumber)
	if err != nil {
		h.t.Fatal(err)
	}
	defer t.Close()
	return t.Kept(history.Hash(content))
}

// appendJournal adds raw text to the current turn's journal.
func (h *harness) appendJournal(text string) {
	h.t.Helper()
	f, err := os.OpenFile(h.journal(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		h.t.Fatal(err)
	}
}

// record appends a record to the current turn's journal the way another
// courier process would (e.g. 'courier approve').
func (h *harness) record(r history.Record) {
	h.t.Helper()
	turn, err := h.store.OpenTurn(h.st.SessionID, h.st.SequenceNumber)
	if err != nil {
		h.t.Fatal(err)
	}
	defer turn.Close()
	if err := turn.Append(r); err != nil {
		h.t.Fatal(err)
	}
}

// waitFor waits until a file exists. The limit only guards against a hang;
// it does not measure anything.
func waitFor(t *testing.T, p string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(p); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", p)
}

func create(p, content string) command.Command {
	return command.Command{Type: command.CreateFile, Path: p, Content: content}
}

// replace is an EDIT_FILE with search/replace pairs given as search,
// replace, search, replace...
func replace(p string, pairs ...string) command.Command {
	c := command.Command{Type: command.EditFile, Path: p}
	for i := 0; i+1 < len(pairs); i += 2 {
		c.Edits = append(c.Edits, command.Edit{Search: pairs[i], Replace: pairs[i+1]})
	}
	return c
}

func lines(p string, start, end int, text string) command.Command {
	return command.Command{Type: command.EditFile, Path: p, StartLine: start, EndLine: end, Content: text}
}

func del(p string) command.Command { return command.Command{Type: command.DeleteFile, Path: p} }

func read(p string) command.Command { return command.Command{Type: command.ReadFile, Path: p} }

func run(cmd string) command.Command { return command.Command{Type: command.RunCommand, Command: cmd} }

// summaries lists results as "status: summary" lines, for messages.
func summaries(rs []command.Result) string {
	var b strings.Builder
	for i, r := range rs {
		fmt.Fprintf(&b, "\n  %d %s: %s", i, r.Status, r.Summary)
	}
	return b.String()
}
