package loop_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/loop"
	"github.com/courier-agent/courier/internal/session"
)

// fixture is a courier root in a fresh folder: inbox, outbox, sessions and
// the workspace new sessions work on.
type fixture struct {
	t     *testing.T
	paths loop.Paths
	l     *loop.Loop
}

func newFixture(t *testing.T, opts loop.Options) *fixture {
	t.Helper()
	paths := loop.DefaultPaths(t.TempDir())
	if err := paths.Ensure(); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, paths: paths, l: loop.New(paths, opts)}
}

func (f *fixture) newSession(task string) *session.State {
	f.t.Helper()
	st, _, err := f.l.NewSession(task, nil)
	if err != nil {
		f.t.Fatalf("new session: %v", err)
	}
	return st
}

func (f *fixture) wsPath(rel string) string {
	return filepath.Join(f.paths.Workspace, filepath.FromSlash(rel))
}

func (f *fixture) writeWS(rel, content string) {
	f.t.Helper()
	writeFile(f.t, f.wsPath(rel), content)
}

func (f *fixture) readWS(rel string) string {
	f.t.Helper()
	return readFile(f.t, f.wsPath(rel))
}

func (f *fixture) existsWS(rel string) bool {
	_, err := os.Lstat(f.wsPath(rel))
	return err == nil
}

// inbox saves a reply in the inbox, as the person does.
func (f *fixture) inbox(name, content string) string {
	f.t.Helper()
	p := filepath.Join(f.paths.Inbox, name)
	writeFile(f.t, p, content)
	return p
}

func (f *fixture) readReply(p string) loop.Reply {
	f.t.Helper()
	r, err := f.l.ReadReply(p)
	if err != nil {
		f.t.Fatalf("read reply: %v", err)
	}
	return r
}

// tryProcess saves a reply in the inbox and processes it.
func (f *fixture) tryProcess(st *session.State, name, content string, opts engine.Options) (loop.Outcome, error) {
	f.t.Helper()
	r := f.readReply(f.inbox(name, content))
	return f.l.Process(context.Background(), st, r, opts)
}

func (f *fixture) process(st *session.State, name, content string) loop.Outcome {
	f.t.Helper()
	out, err := f.tryProcess(st, name, content, engine.Options{})
	if err != nil {
		f.t.Fatalf("process %s: %v", name, err)
	}
	return out
}

// outbox returns the text of a session's outbox.
func (f *fixture) outbox(st *session.State, seq int) string {
	f.t.Helper()
	return readFile(f.t, f.l.OutboxPath(st.SessionID, seq))
}

// load reads a session's state as saved.
func (f *fixture) load(st *session.State) *session.State {
	f.t.Helper()
	saved, err := f.l.Store.Load(st.SessionID)
	if err != nil {
		f.t.Fatal(err)
	}
	return saved
}

// applied reads the session's index of applied replies.
func (f *fixture) applied(st *session.State) []session.ReplyRecord {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.l.Store.Folder(st.SessionID), "replies.jsonl"))
	if err != nil {
		f.t.Fatal(err)
	}
	var out []session.ReplyRecord
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r session.ReplyRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			f.t.Fatalf("replies.jsonl line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// names lists the entries of a folder, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// lineCount counts a file's lines, 0 when it is missing.
func lineCount(p string) int {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	return strings.Count(string(data), "\n")
}
