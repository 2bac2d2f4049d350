package loop_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/loop"
	"github.com/courier-agent/courier/internal/session"
)

// createReply is a reply of n CREATE_FILE blocks of ten lines each, spread
// over folders of 25 files, as a scaffolding answer looks.
func createReply(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[CREATE_FILE path=\"src/pkg%d/file%d.go\"]\n", i/25, i)
		fmt.Fprintf(&b, "package pkg%d\n\n", i/25)
		for l := 0; l < 8; l++ {
			fmt.Fprintf(&b, "var v%d_%d = %d // line %d\n", i, l, i*l, l)
		}
		b.WriteString("[/CREATE_FILE]\n")
	}
	return b.String()
}

// BenchmarkTurn measures one turn as 'courier process' runs it: read the
// reply, journal and carry out its file blocks, write the next outbox and
// commit the session. Run it once as is and once with -tags
// courier_nofsync (a build that never syncs, for this comparison only);
// the ratio of the two is what durability costs.
func BenchmarkTurn(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			reply := createReply(n)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s := newBenchSession(b, b.TempDir())
				p := filepath.Join(s.paths.Inbox, "reply.txt")
				if err := os.WriteFile(p, []byte(reply), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				r, err := s.l.ReadReply(p)
				if err != nil {
					b.Fatal(err)
				}
				out, err := s.l.Process(context.Background(), s.st, r, engine.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if len(out.Engine.Results) != n || out.Outbox == "" {
					b.Fatalf("turn: %d results, outbox %q", len(out.Engine.Results), out.Outbox)
				}
			}
		})
	}
}

// benchSession is a root with one session, for benchmarks.
type benchSession struct {
	paths loop.Paths
	l     *loop.Loop
	st    *session.State
}

func newBenchSession(b *testing.B, root string) *benchSession {
	b.Helper()
	paths := loop.DefaultPaths(root)
	if err := paths.Ensure(); err != nil {
		b.Fatal(err)
	}
	l := loop.New(paths, loop.Options{})
	st, _, err := l.NewSession("benchmark", nil)
	if err != nil {
		b.Fatal(err)
	}
	return &benchSession{paths: paths, l: l, st: st}
}

// turn applies one reply to the session.
func (s *benchSession) turn(b *testing.B, reply string) {
	b.Helper()
	p := filepath.Join(s.paths.Inbox, fmt.Sprintf("reply%d.txt", s.st.SequenceNumber))
	if err := os.WriteFile(p, []byte(reply), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := s.l.ReadReply(p)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.l.Process(context.Background(), s.st, r, engine.Options{}); err != nil {
		b.Fatal(err)
	}
}

// reopen loads the session in a copy of its root, as a new courier run
// would.
func reopen(b *testing.B, root, id string) *benchSession {
	b.Helper()
	paths := loop.DefaultPaths(root)
	l := loop.New(paths, loop.Options{})
	st, err := l.Store.Load(id)
	if err != nil {
		b.Fatal(err)
	}
	st.Workspace = paths.Workspace
	return &benchSession{paths: paths, l: l, st: st}
}

// copyTree copies a folder tree.
func copyTree(b *testing.B, from, to string) {
	b.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v\n%s", err, out)
	}
}

// BenchmarkUndo measures one undo in a session of 200 turns, each of which
// changed files, after depth-1 turns were already undone: each undo should
// cost the same however far back it reaches.
func BenchmarkUndo(b *testing.B) {
	const turns = 200
	page := strings.Repeat("a line of the file this turn wrote\n", 200)
	base := b.TempDir()
	s := newBenchSession(b, filepath.Join(base, "root"))
	// The session keeps the absolute workspace path; copies are reopened
	// with their own.
	for i := 0; i < turns; i++ {
		s.turn(b, fmt.Sprintf("[CREATE_FILE path=\"notes/turn%d.txt\"]\n%s[/CREATE_FILE]\n[CREATE_FILE path=\"notes/log.txt\"]\nturn %d\n[/CREATE_FILE]\n", i, page, i))
	}
	undone := 0
	for _, depth := range []int{1, 50, 200} {
		// The template at this depth has depth-1 turns undone.
		for ; undone < depth-1; undone++ {
			if _, err := s.l.Undo(s.st); err != nil {
				b.Fatal(err)
			}
		}
		tmpl := filepath.Join(base, fmt.Sprintf("depth%d", depth))
		copyTree(b, filepath.Join(base, "root"), tmpl)
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				root := filepath.Join(b.TempDir(), "root")
				copyTree(b, tmpl, root)
				c := reopen(b, root, s.st.SessionID)
				b.StartTimer()
				rep, err := c.l.Undo(c.st)
				if err != nil {
					b.Fatal(err)
				}
				if want := turns - depth + 1; rep.Sequence != want {
					b.Fatalf("undid the reply to request %d, want %d", rep.Sequence, want)
				}
			}
		})
	}
}

// BenchmarkSessionState applies 1,000 short replies to one session and
// reports the size of the session's state file after each hundred: it
// should not grow with the number of turns. Each op is one turn.
func BenchmarkSessionState(b *testing.B) {
	s := newBenchSession(b, b.TempDir())
	sizes := map[int]int64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.turn(b, fmt.Sprintf("[MESSAGE]\nturn %d\n[/MESSAGE]\n", i))
		if n := i + 1; n == 1 || n%100 == 0 {
			info, err := os.Stat(s.l.Store.Path(s.st.SessionID))
			if err != nil {
				b.Fatal(err)
			}
			sizes[n] = info.Size()
		}
	}
	b.StopTimer()
	last := 0
	for n := range sizes {
		last = max(last, n)
	}
	b.ReportMetric(float64(sizes[last]), "state-bytes")
	if last >= 100 {
		b.ReportMetric(float64(sizes[last]-sizes[1])/float64(last-1), "state-bytes/turn")
	}
}
