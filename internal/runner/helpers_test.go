package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
)

// The tests of this package do not run in parallel. A session's lock is an
// flock, and a process started by one test (a RUN_COMMAND) briefly holds a
// copy of every open file of the test binary between its fork and its
// exec, the locks of other tests' sessions included; a test holding a
// session again right after releasing it could then find it "in use".

// fixture is a courier root in a fresh folder (inbox, outbox, sessions and
// the workspace new sessions work on) with the settings courier uses by
// default. r is courier run without a terminal: nothing answers its
// questions, and rec hears what it reports.
type fixture struct {
	t      *testing.T
	paths  runner.Paths
	store  history.Store
	pol    *policy.Policy
	limits runner.Limits
	// snapshots is how the runners record the workspace for undo.
	snapshots runner.Snapshots
	r         *runner.Runner
	rec       *recorder
	// saved counts the replies saved into the inbox, so each gets a later
	// modification time than the one before and the inbox's order is the
	// order they were saved in.
	saved int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	paths := runner.DefaultPaths(t.TempDir())
	if err := paths.Ensure(); err != nil {
		t.Fatal(err)
	}
	d := config.Defaults()
	pol, err := policy.New(d.Policy)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		t:      t,
		paths:  paths,
		store:  history.Store{Dir: paths.Sessions},
		pol:    pol,
		limits: runner.Limits{MaxReply: d.MaxReply, ListLimit: d.ListLimit, ReadLines: d.ReadLines},
	}
	f.r, f.rec = f.runner(nil)
	return f
}

// runner starts courier afresh on the fixture's root, as another run of
// the program would: a runner of its own, reporting to a recorder of its
// own, asking approver (nil: nobody answers).
func (f *fixture) runner(approver runner.Approver) (*runner.Runner, *recorder) {
	d := config.Defaults()
	rec := &recorder{}
	r := runner.New(runner.Config{
		Paths:  f.paths,
		Limits: f.limits,
		Commands: runner.Commands{
			Timeout:   d.CommandTimeout,
			MaxOutput: d.MaxOutput,
			Env:       os.Environ(),
			KeepEnv:   d.KeepEnv,
			Policy:    f.pol,
		},
		FrontEnds: f.frontEnds(),
		Reporter:  rec,
		Approver:  approver,
		Snapshots: f.snapshots,
	})
	return r, rec
}

// create starts a session with f.r and returns its id.
func (f *fixture) create(task string) string {
	f.t.Helper()
	id, err := f.r.Create(task, runner.CreateOptions{})
	if err != nil {
		f.t.Fatalf("new session: %v", err)
	}
	return id
}

// save writes a reply into the inbox as the person does, a second later
// than the reply saved before it, and returns its path.
func (f *fixture) save(name, content string) string {
	f.t.Helper()
	p := filepath.Join(f.paths.Inbox, name)
	writeFile(f.t, p, content)
	f.saved++
	at := time.Now().Add(-time.Hour).Add(time.Duration(f.saved) * time.Second)
	if err := os.Chtimes(p, at, at); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// drop writes a reply into the inbox in one step (a hidden file renamed),
// so a watcher never sees it half written.
func (f *fixture) drop(name, content string) string {
	f.t.Helper()
	tmp := filepath.Join(f.paths.Inbox, ".part-"+name)
	writeFile(f.t, tmp, content)
	p := filepath.Join(f.paths.Inbox, name)
	if err := os.Rename(tmp, p); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// tryApply saves a reply in the inbox and applies it to session id with
// r, as 'courier process --session id inbox/name' does.
func (f *fixture) tryApply(r *runner.Runner, id, name, content string) error {
	f.t.Helper()
	p := f.save(name, content)
	return r.ApplyFrom(context.Background(), &inbox.File{Path: p, Inbox: f.paths.Inbox}, id, "courier process")
}

// apply is tryApply with f.r, failing the test on an error.
func (f *fixture) apply(id, name, content string) {
	f.t.Helper()
	if err := f.tryApply(f.r, id, name, content); err != nil {
		f.t.Fatalf("apply %s: %v", name, err)
	}
}

func (f *fixture) requestPath(id string, seq int) string {
	return filepath.Join(f.paths.Outbox, fmt.Sprintf("%s_seq%04d.txt", id, seq))
}

// request returns the text of a session's request.
func (f *fixture) request(id string, seq int) string {
	f.t.Helper()
	return readFile(f.t, f.requestPath(id, seq))
}

// load reads a session's state as saved.
func (f *fixture) load(id string) *history.State {
	f.t.Helper()
	st, err := f.store.Load(id)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

// records reads the journal of a session's turn.
func (f *fixture) records(id string, seq int) []history.Record {
	f.t.Helper()
	turn, err := f.store.ReadTurn(id, seq)
	if err != nil {
		f.t.Fatal(err)
	}
	return turn.Records
}

// kinds lists the kinds of a turn's records, with the command index of
// those about one command ("begin apply/0 result/0 decision/1 ..."),
// leaving out those that say what each command changed in the workspace.
func (f *fixture) kinds(id string, seq int) string {
	f.t.Helper()
	var out []string
	for _, r := range f.records(id, seq) {
		if r.Kind == history.RecordChanged {
			continue
		}
		if r.Kind == history.RecordBegin || r.Kind == history.RecordUndone {
			out = append(out, string(r.Kind))
			continue
		}
		out = append(out, fmt.Sprintf("%s/%d", r.Kind, r.Index))
	}
	return strings.Join(out, " ")
}

func (f *fixture) journalPath(id string, seq int) string {
	return filepath.Join(f.store.Folder(id), "turns", fmt.Sprintf("%04d.jsonl", seq))
}

// crashAfter cuts a turn's record right after its n-th record kinds
// lists, as if courier had died right after writing it.
func (f *fixture) crashAfter(id string, seq, n int) {
	f.t.Helper()
	p := f.journalPath(id, seq)
	lines := strings.SplitAfter(readFile(f.t, p), "\n")
	keep := 0
	for k := 0; k < n; keep++ {
		if keep >= len(lines) || lines[keep] == "" {
			f.t.Fatalf("journal has too few records to keep %d", n)
		}
		if !strings.Contains(lines[keep], `"kind":"changed"`) {
			k++
		}
	}
	writeFile(f.t, p, strings.Join(lines[:keep], ""))
}

// snapshot keeps a copy of a session's state file; restore puts it back,
// as if nothing after the snapshot had been saved.
func (f *fixture) snapshot(id string) []byte {
	f.t.Helper()
	data, err := os.ReadFile(f.store.Path(id))
	if err != nil {
		f.t.Fatal(err)
	}
	return data
}

func (f *fixture) restore(id string, data []byte) {
	f.t.Helper()
	if err := os.WriteFile(f.store.Path(id), data, 0o644); err != nil {
		f.t.Fatal(err)
	}
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
	return exists(f.wsPath(rel))
}

func (f *fixture) inInbox(name string) bool {
	return exists(filepath.Join(f.paths.Inbox, name))
}

func (f *fixture) processed(name string) string {
	return filepath.Join(f.paths.Inbox, "processed", name)
}

func (f *fixture) rejected(name string) string {
	return filepath.Join(f.paths.Inbox, "rejected", name)
}

// watchOptions tune the tests' watchers to notice a reply quickly; the
// replies are written in one step, so a short settle splits none.
func watchOptions() inbox.WatchOptions {
	return inbox.WatchOptions{Settle: 100 * time.Millisecond, Interval: 50 * time.Millisecond, Rescan: 250 * time.Millisecond}
}

// watcher is the inbox source 'courier watch' uses for session id.
func (f *fixture) watcher(id string) *inbox.Watcher {
	return inbox.NewWatcher(f.paths.Inbox, id, watchOptions())
}

// serving is a session served in the background, as by 'courier watch'.
type serving struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// serve holds session id with r and serves it from src until it ends; the
// test's end stops it.
func (f *fixture) serve(r *runner.Runner, id string, src runner.Source) *serving {
	f.t.Helper()
	s, err := r.Hold(id, "courier watch")
	if err != nil {
		f.t.Fatalf("hold %s: %v", id, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	sv := &serving{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(sv.done)
		sv.err = s.Serve(ctx, src)
		s.Release()
	}()
	f.t.Cleanup(func() {
		cancel()
		<-sv.done
	})
	return sv
}

// wait returns what Serve returned, once the session is released.
func (sv *serving) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-sv.done:
		return sv.err
	case <-time.After(waitLimit + 5*time.Second):
		t.Fatal("Serve did not return")
		return nil
	}
}

// waitLimit bounds every wait for the runner in the background; it is a
// guard against a hang, not a speed check.
const waitLimit = 30 * time.Second

// waitFor polls cond until it holds, failing the test after waitLimit.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recorder is a reporter keeping every event, safe to read while a
// session is served in the background.
type recorder struct {
	mu     sync.Mutex
	events []any
}

func (r *recorder) add(e any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) SessionStarted(e runner.SessionStarted)   { r.add(e) }
func (r *recorder) RequestWritten(e runner.RequestWritten)   { r.add(e) }
func (r *recorder) WaitingForReply(e runner.WaitingForReply) { r.add(e) }
func (r *recorder) ReplyTaken(e runner.ReplyTaken)           { r.add(e) }
func (r *recorder) ReplySkipped(e runner.ReplySkipped)       { r.add(e) }
func (r *recorder) ReplySetAside(e runner.ReplySetAside)     { r.add(e) }
func (r *recorder) ReplyRefused(e runner.ReplyRefused)       { r.add(e) }
func (r *recorder) TurnResumed(e runner.TurnResumed)         { r.add(e) }
func (r *recorder) CommandStarted(e runner.CommandStarted)   { r.add(e) }
func (r *recorder) CommandFinished(e runner.CommandFinished) { r.add(e) }
func (r *recorder) ApprovalNeeded(e runner.ApprovalNeeded)   { r.add(e) }
func (r *recorder) ApprovalDecided(e runner.ApprovalDecided) { r.add(e) }
func (r *recorder) TurnEnded(e runner.TurnEnded)             { r.add(e) }
func (r *recorder) TurnUndone(e runner.TurnUndone)           { r.add(e) }
func (r *recorder) AgentRun(e runner.AgentRun)               { r.add(e) }
func (r *recorder) Warning(e runner.Warning)                 { r.add(e) }

func (r *recorder) all() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.events...)
}

// eventsOf returns the events of type T a recorder heard, in order.
func eventsOf[T any](r *recorder) []T {
	var out []T
	for _, e := range r.all() {
		if v, ok := e.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// position returns the index of the first event matching match, or -1.
func position(events []any, match func(any) bool) int {
	for i, e := range events {
		if match(e) {
			return i
		}
	}
	return -1
}

// person is the approver of a test: it answers the questions with its
// answers in order, or fails with err, and keeps the questions it was
// asked. asked, when set, is called with each question before it answers.
type person struct {
	mu        sync.Mutex
	answers   []runner.Decision
	err       error
	asked     func(runner.Question)
	questions []runner.Question
}

func (p *person) Approve(_ context.Context, q runner.Question) (runner.Decision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.questions = append(p.questions, q)
	if p.asked != nil {
		p.asked(q)
	}
	if p.err != nil {
		return runner.Decision{}, p.err
	}
	if len(p.answers) == 0 {
		return runner.Decision{}, errors.New("the test has no answer for this question")
	}
	d := p.answers[0]
	p.answers = p.answers[1:]
	return d, nil
}

func (p *person) asks() []runner.Question {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]runner.Question(nil), p.questions...)
}

func answers(as ...runner.Answer) *person {
	p := &person{}
	for _, a := range as {
		p.answers = append(p.answers, runner.Decision{Answer: a})
	}
	return p
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

// names lists the entries of a folder, sorted; none for a missing folder.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
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

// frontEnds are the protocols courier speaks.
func (f *fixture) frontEnds() []frontend.FrontEnd {
	return []frontend.FrontEnd{protocol.Tags{}}
}

// eventTypes names the events in order, for a failure message.
func eventTypes(events []any) string {
	var out []string
	for _, e := range events {
		out = append(out, strings.TrimPrefix(fmt.Sprintf("%T", e), "runner."))
	}
	return strings.Join(out, " ")
}

// settler settles replies in the inbox, as 'courier approve' does.
func (f *fixture) settler() runner.Source {
	return inbox.Queue{Dir: f.paths.Inbox}.Source("", false)
}

// applied are the replies of the session's committed turns, in order.
type applied struct {
	Sequence int
	File     string
}

func (f *fixture) replies(id string) []applied {
	f.t.Helper()
	st := f.load(id)
	committed := st.SequenceNumber - 1
	if st.IsComplete {
		committed = st.SequenceNumber
	}
	var out []applied
	for seq := 1; seq <= committed; seq++ {
		if t, err := f.store.ReadTurn(id, seq); err == nil {
			if begin, ok := t.Begun(); ok {
				out = append(out, applied{seq, begin.ReplyFile})
			}
		}
	}
	return out
}
