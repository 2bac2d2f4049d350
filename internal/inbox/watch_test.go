package inbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/syncbuf"
)

// testSettle is long next to the pauses the tests write with, so a busy
// machine does not split a reply, and short enough to keep tests quick.
const testSettle = 400 * time.Millisecond

// waitLimit bounds every wait for a delivery; it is a failure guard, not a
// speed check.
const waitLimit = 15 * time.Second

// modes are the two ways of watching. The event mode rescans so rarely that
// only file events can lead to a delivery within a test.
var modes = []struct {
	name string
	opts WatchOptions
}{
	{"events", WatchOptions{Settle: testSettle, Rescan: time.Hour}},
	{"poll", WatchOptions{Poll: true, Interval: 50 * time.Millisecond, Settle: testSettle}},
}

type delivery struct {
	name    string // base name
	content string // content at the moment of delivery
}

// watchRun is a running Watch whose deliveries the test reads.
type watchRun struct {
	t   *testing.T
	dir string
	got chan delivery
	log *syncbuf.Buffer
}

// startWatch runs Watch on a new folder, prepared by setup before Watch
// starts. then runs inside deliver after the content is read, like a
// consumer would (it may move the file away), and before the test sees the
// delivery.
func startWatch(t *testing.T, opts WatchOptions, setup func(t *testing.T, dir string), then func(path string)) *watchRun {
	t.Helper()
	dir := t.TempDir()
	if setup != nil {
		setup(t, dir)
	}
	r := &watchRun{t: t, dir: dir, got: make(chan delivery, 100), log: &syncbuf.Buffer{}}
	opts.Warn = func(msg string) { fmt.Fprintln(r.log, msg) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, dir, opts, func(path string) error {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("delivered %s, which cannot be read: %v", path, err)
			}
			if filepath.Dir(path) != dir {
				t.Errorf("delivered %s, outside %s", path, dir)
			}
			if then != nil {
				then(path)
			}
			r.got <- delivery{filepath.Base(path), string(data)}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch returned %v after cancel, want nil", err)
		}
	})
	return r
}

func (r *watchRun) write(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// next waits for the next delivery.
func (r *watchRun) next() delivery {
	r.t.Helper()
	for {
		select {
		case d := <-r.got:
			if strings.HasPrefix(d.name, "live-") {
				continue // a late answer to waitLive
			}
			return d
		case <-time.After(waitLimit):
			r.t.Fatalf("no delivery within %s; log:\n%s", waitLimit, r.log)
			return delivery{}
		}
	}
}

// expect waits for exactly the given deliveries, in order.
func (r *watchRun) expect(want ...delivery) {
	r.t.Helper()
	for i, w := range want {
		if got := r.next(); got != w {
			r.t.Fatalf("delivery %d = %+v, want %+v", i+1, got, w)
		}
	}
}

// expectOnly writes a sentinel reply and expects the given deliveries and
// then the sentinel, which shows that nothing else came before it.
func (r *watchRun) expectOnly(want ...delivery) {
	r.t.Helper()
	r.write("zz-sentinel.txt", "sentinel")
	r.expect(append(want, delivery{"zz-sentinel.txt", "sentinel"})...)
}

func TestWatch(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) // before Watch starts
		then  func(path string)              // inside deliver
		act   func(t *testing.T, r *watchRun)
	}{
		{
			name: "file written at once",
			act: func(t *testing.T, r *watchRun) {
				r.write("reply.txt", "[DONE]ok[/DONE]\n")
				r.expectOnly(delivery{"reply.txt", "[DONE]ok[/DONE]\n"})
			},
		},
		{
			name: "two chunks with a pause are delivered once, complete",
			act: func(t *testing.T, r *watchRun) {
				f, err := os.Create(filepath.Join(r.dir, "reply.md"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				f.WriteString("first half\n")
				time.Sleep(testSettle / 4)
				f.WriteString("second half\n")
				f.Close()
				r.expectOnly(delivery{"reply.md", "first half\nsecond half\n"})
			},
		},
		{
			name: "renamed into place",
			act: func(t *testing.T, r *watchRun) {
				// A browser download: partial name first, final name last.
				part := filepath.Join(r.dir, "reply.txt.crdownload")
				if err := os.WriteFile(part, []byte("downloaded"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(part, filepath.Join(r.dir, "reply.txt")); err != nil {
					t.Fatal(err)
				}
				r.expectOnly(delivery{"reply.txt", "downloaded"})
			},
		},
		{
			name: "editor atomic replace of a delivered file",
			act: func(t *testing.T, r *watchRun) {
				r.write("reply.txt", "v1")
				r.expect(delivery{"reply.txt", "v1"})
				tmp := filepath.Join(r.dir, ".reply.txt.tmp123")
				if err := os.WriteFile(tmp, []byte("v2"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, filepath.Join(r.dir, "reply.txt")); err != nil {
					t.Fatal(err)
				}
				r.expectOnly(delivery{"reply.txt", "v2"})
			},
		},
		{
			name: "hidden and temporary files ignored",
			act: func(t *testing.T, r *watchRun) {
				for _, name := range []string{".reply.txt", ".reply.txt.swp", "reply.txt~", "reply.txt.tmp",
					"reply.txt.part", "#reply.txt#", "reply.txt.crdownload"} {
					r.write(name, "not a reply")
				}
				if err := os.Mkdir(filepath.Join(r.dir, "folder.txt"), 0o755); err != nil {
					t.Fatal(err)
				}
				r.expectOnly()
			},
		},
		{
			name: "pre-existing files first, oldest first",
			setup: func(t *testing.T, dir string) {
				old := time.Now().Add(-time.Hour)
				writeAt(t, dir, "a.txt", "newer", old.Add(time.Minute))
				writeAt(t, dir, "b.txt", "older", old)
				writeAt(t, dir, "c.md", "newest", old.Add(2*time.Minute))
			},
			act: func(t *testing.T, r *watchRun) {
				r.expectOnly(delivery{"b.txt", "older"}, delivery{"a.txt", "newer"}, delivery{"c.md", "newest"})
			},
		},
		{
			name: "file removed before it settles is not delivered",
			act: func(t *testing.T, r *watchRun) {
				// Still open for writing, so not settled: a closed write
				// is complete at once and may be read before it goes.
				f, err := os.Create(filepath.Join(r.dir, "gone.txt"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteString("short-lived"); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(filepath.Join(r.dir, "gone.txt")); err != nil {
					t.Fatal(err)
				}
				r.expectOnly()
			},
		},
		{
			name: "consumer moves replies to processed, same name again is new",
			then: func(path string) {
				processed := filepath.Join(filepath.Dir(path), "processed")
				os.MkdirAll(processed, 0o755)
				os.Rename(path, filepath.Join(processed, filepath.Base(path)))
			},
			act: func(t *testing.T, r *watchRun) {
				r.write("reply.txt", "turn 1")
				r.expect(delivery{"reply.txt", "turn 1"})
				r.write("reply.txt", "turn 2")
				r.expectOnly(delivery{"reply.txt", "turn 2"})
			},
		},
		{
			name: "changed content delivered again, unchanged content not",
			act: func(t *testing.T, r *watchRun) {
				path := filepath.Join(r.dir, "reply.txt")
				r.write("reply.txt", "one")
				r.expect(delivery{"reply.txt", "one"})
				// Saving the same text again (a new mtime) is not a new reply.
				later := time.Now().Add(time.Minute)
				if err := os.Chtimes(path, later, later); err != nil {
					t.Fatal(err)
				}
				os.Chmod(path, 0o600)
				r.write("a-sentinel.txt", "wait")
				r.expect(delivery{"a-sentinel.txt", "wait"})
				r.write("reply.txt", "two")
				r.expectOnly(delivery{"reply.txt", "two"})
			},
		},
		{
			name: "empty file waits for content",
			act: func(t *testing.T, r *watchRun) {
				// A browser creates the final name empty before the download.
				r.write("reply.txt", "")
				r.write("a-sentinel.txt", "wait")
				r.expect(delivery{"a-sentinel.txt", "wait"})
				r.write("reply.txt", "landed")
				r.expectOnly(delivery{"reply.txt", "landed"})
			},
		},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					r := startWatch(t, mode.opts, tt.setup, tt.then)
					tt.act(t, r)
				})
			}
		})
	}
}

func TestWatchStopsOnDeliverError(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			writeAt(t, dir, "reply.txt", "x", time.Now().Add(-time.Minute))
			stop := errors.New("session finished")
			calls := 0
			err := Watch(context.Background(), dir, mode.opts, func(string) error {
				calls++
				return stop
			})
			if !errors.Is(err, stop) || calls != 1 {
				t.Errorf("Watch = %v after %d deliveries, want %v after 1", err, calls, stop)
			}
		})
	}
}

func TestWatchBadFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing"), file} {
		err := Watch(context.Background(), path, WatchOptions{}, func(string) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "watch inbox") {
			t.Errorf("Watch(%s) = %v, want a watch inbox error", path, err)
		}
	}
}

// TestWatchFolderRecreated removes the inbox (which ends its file events)
// and makes it again; replies saved there afterwards must still arrive.
func TestWatchFolderRecreated(t *testing.T) {
	opts := WatchOptions{Settle: testSettle, Rescan: 100 * time.Millisecond}
	r := startWatch(t, opts, nil, nil)
	r.write("one.txt", "1")
	r.expect(delivery{"one.txt", "1"})
	if err := os.RemoveAll(r.dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(r.log.String(), "removed") }, "removal noted")
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(r.log.String(), "again") }, "watching again")
	r.write("two.txt", "2")
	r.expectOnly(delivery{"two.txt", "2"})
}

// waitFor polls cond until it holds, failing after waitLimit.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchCancelNoLeak checks that cancelling ctx ends Watch and every
// goroutine it started, including fsnotify's reader.
func TestWatchCancelNoLeak(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			got := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				done <- Watch(ctx, dir, mode.opts, func(p string) error { got <- p; return nil })
			}()
			if err := os.WriteFile(filepath.Join(dir, "r.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			select {
			case <-got:
			case <-time.After(waitLimit):
				t.Fatal("no delivery")
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Watch = %v after cancel, want nil", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("Watch did not return after cancel")
			}
			waitFor(t, func() bool { return !watcherGoroutines() }, "watch goroutines to end")
		})
	}
}

// watcherGoroutines reports whether any goroutine runs inbox or fsnotify
// code outside of tests.
func watcherGoroutines() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "inbox.Test") {
			continue
		}
		if strings.Contains(g, "fsnotify") || strings.Contains(g, "internal/inbox.") {
			return true
		}
	}
	return false
}
