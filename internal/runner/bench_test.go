//go:build unix

package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
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
// commit the session.
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
				if err := s.r.ApplyFrom(context.Background(), &inbox.File{Path: p, Inbox: s.paths.Inbox}, s.id, "courier process"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if info, err := s.r.Status(s.id); err != nil || info.Sequence != 2 {
					b.Fatalf("turn not committed: %+v, %v", info, err)
				}
				b.StartTimer()
			}
		})
	}
}

// benchSession is a root with one session, for benchmarks.
type benchSession struct {
	paths runner.Paths
	r     *runner.Runner
	id    string
	seq   int
}

// benchRunner is a runner on root, as a courier run would build it.
func benchRunner(b *testing.B, paths runner.Paths, limits ...func(*runner.Limits)) *runner.Runner {
	b.Helper()
	d := config.Defaults()
	pol, err := policy.New(d.Policy)
	if err != nil {
		b.Fatal(err)
	}
	l := runner.Limits{MaxReply: d.MaxReply, ListLimit: d.ListLimit, ReadLines: d.ReadLines}
	for _, f := range limits {
		f(&l)
	}
	return runner.New(runner.Config{
		Paths:     paths,
		Limits:    l,
		Commands:  runner.Commands{Timeout: d.CommandTimeout, MaxOutput: d.MaxOutput, Env: os.Environ(), Policy: pol},
		FrontEnds: []frontend.FrontEnd{protocol.Tags{}},
	})
}

func newBenchSession(b *testing.B, root string) *benchSession {
	b.Helper()
	paths := runner.DefaultPaths(root)
	if err := paths.Ensure(); err != nil {
		b.Fatal(err)
	}
	r := benchRunner(b, paths)
	id, err := r.Create("benchmark", runner.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return &benchSession{paths: paths, r: r, id: id, seq: 1}
}

// turn applies one reply to the session.
func (s *benchSession) turn(b *testing.B, reply string) {
	b.Helper()
	p := filepath.Join(s.paths.Inbox, fmt.Sprintf("reply%d.txt", s.seq))
	if err := os.WriteFile(p, []byte(reply), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := s.r.ApplyFrom(context.Background(), &inbox.File{Path: p, Inbox: s.paths.Inbox}, s.id, "courier process"); err != nil {
		b.Fatal(err)
	}
	s.seq++
}

// undo undoes the session's last undoable turn.
func (s *benchSession) undo(b *testing.B) runner.UndoReport {
	b.Helper()
	h, err := s.r.Hold(s.id, "courier undo")
	if err != nil {
		b.Fatal(err)
	}
	defer h.Release()
	rep, err := h.Undo()
	if err != nil {
		b.Fatal(err)
	}
	return rep
}

// reopen takes up the session in a copy of its root, as a new courier run
// would.
func reopen(b *testing.B, root, id string) *benchSession {
	b.Helper()
	paths := runner.DefaultPaths(root)
	// The copied session names the original workspace: point it at the
	// copy's.
	store := history.Store{Dir: paths.Sessions}
	st, err := store.Load(id)
	if err != nil {
		b.Fatal(err)
	}
	st.Workspace = paths.Workspace
	if err := store.Save(st); err != nil {
		b.Fatal(err)
	}
	return &benchSession{paths: paths, r: benchRunner(b, paths), id: id}
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
			s.undo(b)
		}
		tmpl := filepath.Join(base, fmt.Sprintf("depth%d", depth))
		copyTree(b, filepath.Join(base, "root"), tmpl)
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				root := filepath.Join(b.TempDir(), "root")
				copyTree(b, tmpl, root)
				c := reopen(b, root, s.id)
				b.StartTimer()
				rep := c.undo(b)
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
			info, err := os.Stat(filepath.Join(s.paths.Sessions, s.id+".json"))
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

// BenchmarkPack measures the first request of 'courier new --include **'
// on Go's own source (src/net and the whole src), with the default token
// budget and with none: list, rank, read and number what fits, render and
// write the request. Each op is one session created; the request's size
// is reported, and the processor time the op took (cpu-ns/op), which on
// a busy machine varies less than the time it waited.
func BenchmarkPack(b *testing.B) {
	goroot := runtime.GOROOT()
	for _, t := range []struct{ name, dir string }{{"net", "src/net"}, {"src", "src"}} {
		tree := filepath.Join(goroot, filepath.FromSlash(t.dir))
		for _, budget := range []int{100000, 0} {
			b.Run(fmt.Sprintf("tree=%s/budget=%d", t.name, budget), func(b *testing.B) {
				var size int64
				var cpu time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					paths := runner.DefaultPaths(b.TempDir())
					paths.Workspace = tree
					if err := paths.Ensure(); err != nil {
						b.Fatal(err)
					}
					r := benchRunner(b, paths, func(l *runner.Limits) { l.TokenBudget = budget })
					b.StartTimer()
					before := cpuTime(b)
					if _, err := r.Create("explain how this code is organised", runner.CreateOptions{Includes: []string{"**"}, SnapshotLater: true}); err != nil {
						b.Fatal(err)
					}
					cpu += cpuTime(b) - before
					b.StopTimer()
					entries, err := os.ReadDir(paths.Outbox)
					if err != nil || len(entries) != 1 {
						b.Fatalf("outbox: %v, %v", entries, err)
					}
					info, err := entries[0].Info()
					if err != nil {
						b.Fatal(err)
					}
					size = info.Size()
					b.StartTimer()
				}
				b.ReportMetric(float64(size), "request-bytes")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime is the processor time the process has taken so far, in user and
// kernel mode.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
