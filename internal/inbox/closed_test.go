package inbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// noSettle is a settle period no test outlives: a delivery within
// waitLimit shows the reply was taken as complete when it was closed or
// moved in, not because it settled.
const noSettle = time.Hour

// startComplete runs Watch with file events and a settle period that never
// ends. Close-write events exist on Linux only; elsewhere every reply
// settles, which TestWatch covers.
func startComplete(t *testing.T) *watchRun {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("close-write events are read on Linux only; elsewhere replies are delivered once they settle")
	}
	r := startWatch(t, WatchOptions{Settle: noSettle, Rescan: time.Hour}, nil, func(path string) {
		os.Remove(path)
	})
	r.waitLive()
	return r
}

// waitLive returns once Watch reads close events: Watch starts on its own
// goroutine, and a file written before its events are set up is found by
// its first listing and waits to settle. Each try is older than the one
// before, so a try that waits holds up none after it.
func (r *watchRun) waitLive() {
	r.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for i := 0; time.Now().Before(deadline); i++ {
		name := fmt.Sprintf("live-%d.txt", i)
		old := time.Now().Add(-time.Hour - time.Duration(i)*time.Minute)
		writeAt(r.t, r.dir, ".tmp", "live", old)
		if err := os.Rename(filepath.Join(r.dir, ".tmp"), filepath.Join(r.dir, name)); err != nil {
			r.t.Fatal(err)
		}
		select {
		case d := <-r.got:
			if !strings.HasPrefix(d.name, "live-") {
				r.t.Fatalf("delivered %+v while waiting for %s", d, name)
			}
			for j := range i + 1 {
				os.Remove(filepath.Join(r.dir, fmt.Sprintf("live-%d.txt", j)))
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	r.t.Fatalf("Watch took no moved-in file within %s; log:\n%s", waitLimit, r.log)
}

// oldSentinel moves a reply in whose write time is older than everything
// else: it is delivered whatever waits, which shows the watcher has seen
// the events before it and had nothing else to deliver.
func (r *watchRun) oldSentinel(name string) {
	r.t.Helper()
	tmp := filepath.Join(r.dir, ".tmp-"+name)
	writeAt(r.t, r.dir, ".tmp-"+name, "sentinel", time.Now().Add(-time.Hour))
	if err := os.Rename(tmp, filepath.Join(r.dir, name)); err != nil {
		r.t.Fatal(err)
	}
	r.expect(delivery{name, "sentinel"})
}

func TestWatchTakesACompleteReplyAtOnce(t *testing.T) {
	t.Run("written in place and closed", func(t *testing.T) {
		r := startComplete(t)
		r.write("reply.txt", "[DONE]\nok\n[/DONE]\n")
		r.expect(delivery{"reply.txt", "[DONE]\nok\n[/DONE]\n"})
	})
	t.Run("moved in", func(t *testing.T) {
		r := startComplete(t)
		tmp := filepath.Join(r.dir, "reply.txt.crdownload")
		if err := os.WriteFile(tmp, []byte("[MESSAGE]\nhi\n[/MESSAGE]"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(r.dir, "reply.txt")); err != nil {
			t.Fatal(err)
		}
		r.expect(delivery{"reply.txt", "[MESSAGE]\nhi\n[/MESSAGE]"})
	})
	t.Run("no final newline but every block closed", func(t *testing.T) {
		r := startComplete(t)
		r.write("reply.md", "Session: a1b2c3d4\n[RUN_COMMAND]\nls\n[/RUN_COMMAND]")
		r.expect(delivery{"reply.md", "Session: a1b2c3d4\n[RUN_COMMAND]\nls\n[/RUN_COMMAND]"})
	})
}

// A reply still open for writing is not taken, however long the writer
// pauses; it is taken whole when the writer closes it.
func TestWatchWaitsForTheWriterToClose(t *testing.T) {
	r := startComplete(t)
	f, err := os.Create(filepath.Join(r.dir, "reply.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("[CREATE_FILE path=\"a.txt\"]\nfirst half\n")
	f.Sync()
	r.oldSentinel("a-sentinel.txt")
	f.WriteString("second half\n[/CREATE_FILE]\n")
	f.Close()
	r.expect(delivery{"reply.txt", "[CREATE_FILE path=\"a.txt\"]\nfirst half\nsecond half\n[/CREATE_FILE]\n"})
}

// A reply saved just before Watch began is found by its first listing; it
// is taken at once when no one has it open for writing, and a reply still
// open for writing is taken when its writer closes it.
func TestWatchTakesRepliesSavedBeforeItBegan(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("write leases are asked for on Linux only; elsewhere replies are delivered once they settle")
	}
	var open *os.File
	r := startWatch(t, WatchOptions{Settle: noSettle, Rescan: time.Hour}, func(t *testing.T, dir string) {
		writeAt(t, dir, "saved.txt", "[DONE]\nok\n[/DONE]\n", time.Now().Add(-2*time.Hour))
		f, err := os.Create(filepath.Join(dir, "writing.txt"))
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("[DONE]\nnot yet")
		open = f
	}, func(path string) { os.Remove(path) })
	defer open.Close()
	r.expect(delivery{"saved.txt", "[DONE]\nok\n[/DONE]\n"})
	r.waitLive()
	open.WriteString("\n[/DONE]\n")
	open.Close()
	r.expect(delivery{"writing.txt", "[DONE]\nnot yet\n[/DONE]\n"})
}

// Two writers: the first one's close does not make the reply complete
// while the second still has it open.
func TestWatchWaitsForTheLastWriter(t *testing.T) {
	r := startComplete(t)
	path := filepath.Join(r.dir, "reply.txt")
	second, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	r.write("reply.txt", "[DONE]\nfirst\n[/DONE]\n") // opened, written and closed meanwhile
	r.oldSentinel("a-sentinel.txt")
	second.Close()
	r.expect(delivery{"reply.txt", "[DONE]\nfirst\n[/DONE]\n"})
}

// A reply closed while it still looks cut off (an open last block, as when
// a writer saves in several goes) waits to settle; once the rest is
// written and closed it is taken at once.
func TestWatchWaitsForACutOffReply(t *testing.T) {
	r := startComplete(t)
	path := filepath.Join(r.dir, "reply.txt")
	r.write("reply.txt", "[CREATE_FILE path=\"a.txt\"]\nfirst hal")
	r.oldSentinel("a-sentinel.txt")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("f\n[/CREATE_FILE]")
	f.Close()
	r.expect(delivery{"reply.txt", "[CREATE_FILE path=\"a.txt\"]\nfirst half\n[/CREATE_FILE]"})
}

func TestLooksCutOff(t *testing.T) {
	tests := []struct {
		content string
		cut     bool
	}{
		{"", false},
		{"plain text", false},
		{"[DONE]\nok\n[/DONE]", false},
		{"[DONE]\nok\n[/DONE]\n", false},
		{"[CREATE_FILE path=\"x\"]\nhalf", true},
		{"[CREATE_FILE path=\"x\"]\nhalf\n", true},
		{"  [run_command]\nls", true},
		{"[RUN_COMMAND timeout=\"5\"]\nls", true},
		{"[MESSAGE]\na\n[/MESSAGE]\n[EDIT_FILE path=\"x\"]\n<<<<<<< SEARCH", true},
		{"[EDIT_FILE path=\"x\"]\n[/EDIT_FILE]\n[DELETE_FILE path=\"y\"]", false},
		{"[READ_FILE path=\"x\"]", false},
		{"text about [DONE] in a line", false},
		{"[DONE]", true},
	}
	for _, tc := range tests {
		path := filepath.Join(t.TempDir(), "r.txt")
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if cut, err := looksCutOff(path); err != nil || cut != tc.cut {
			t.Errorf("looksCutOff(%q) = %v, %v; want %v", tc.content, cut, err, tc.cut)
		}
	}
	long := strings.Repeat("x", 100<<10)
	path := filepath.Join(t.TempDir(), "r.txt")
	os.WriteFile(path, []byte("[CREATE_FILE path=\"x\"]\n"+long), 0o644)
	if cut, err := looksCutOff(path); err != nil || !cut {
		t.Errorf("a long open block: %v, %v", cut, err)
	}
}

// A complete reply waits while an older one is still being written, so
// replies are taken oldest first.
func TestTrackerKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	older := writeAt(t, dir, "a.txt", "[RUN_COMMAND]\nls", now.Add(-time.Minute))
	newer := writeAt(t, dir, "b.txt", "[DONE]\nok\n[/DONE]\n", now)
	tr := newTracker(time.Second)
	tr.observe(older, now)
	tr.observe(newer, now)
	tr.finished(older, now, true) // closed, but cut off: it waits to settle
	tr.finished(newer, now, true)
	if got := tr.ready(now); len(got) != 0 {
		t.Fatalf("ready = %v while the older reply settles", got)
	}
	if due, ok := tr.nextDue(); !ok || !due.Equal(now.Add(time.Second)) {
		t.Errorf("nextDue = %v, %v; want when the older one settles", due, ok)
	}
	if got := tr.ready(now.Add(time.Second)); !slices.Equal(got, []string{older, newer}) {
		t.Errorf("ready after the settle period = %v, want both, oldest first", got)
	}
}
