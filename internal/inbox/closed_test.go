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
	expectWaitsForRest(t, "[CREATE_FILE path=\"a.txt\"]\nfirst hal", "f\n[/CREATE_FILE]")
}

// The same for a JSON reply saved in two goes: the first piece ends
// inside its ```json fence.
func TestWatchWaitsForACutOffJSONReply(t *testing.T) {
	expectWaitsForRest(t, "```json\n{\"operations\": [{\"type\": \"readFile\", \"pa", "th\": \"a.txt\"}]}\n```\n")
}

// expectWaitsForRest writes first as a reply and closes it, then appends
// rest: the reply must be delivered whole, after a sentinel written
// between the two.
func expectWaitsForRest(t *testing.T, first, rest string) {
	t.Helper()
	r := startComplete(t)
	path := filepath.Join(r.dir, "reply.txt")
	r.write("reply.txt", first)
	r.oldSentinel("a-sentinel.txt")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(rest)
	f.Close()
	r.expect(delivery{"reply.txt", first + rest})
}

func TestLooksCutOff(t *testing.T) {
	tests := []struct {
		content string
		cut     cutOff
	}{
		{"", cutOff{}},
		{"plain text", cutOff{midLine: true}},
		{"[DONE]\nok\n[/DONE]", cutOff{midLine: true}},
		{"[DONE]\nok\n[/DONE]\n", cutOff{}},
		{"[CREATE_FILE path=\"x\"]\nhalf", cutOff{open: true, midLine: true}},
		{"[CREATE_FILE path=\"x\"]\nhalf\n", cutOff{open: true}},
		{"  [run_command]\nls", cutOff{open: true, midLine: true}},
		{"[RUN_COMMAND timeout=\"5\"]\nls", cutOff{open: true, midLine: true}},
		{"[MESSAGE]\na\n[/MESSAGE]\n[EDIT_FILE path=\"x\"]\n<<<<<<< SEARCH", cutOff{open: true, midLine: true}},
		{"[EDIT_FILE path=\"x\"]\n[/EDIT_FILE]\n[DELETE_FILE path=\"y\"]", cutOff{midLine: true}},
		{"[READ_FILE path=\"x\"]\n", cutOff{}},
		{"text about [DONE] in a line", cutOff{midLine: true}},
		{"[DONE]", cutOff{open: true, midLine: true}},
		// JSON replies (Agent Spaces): open inside a fence, or inside
		// an object or a string of bare JSON.
		{"```json\n{\"operations\": [", cutOff{open: true, midLine: true}},
		{"Plan:\n```json\n{\"operations\": []}\n", cutOff{open: true}},
		{"Plan:\n```json\n{\"operations\": []}\n```\nDone.\n", cutOff{}},
		{"{\"operations\": [{\"type\": \"writeFile\", \"content\": \"a\\\"b", cutOff{open: true, midLine: true}},
		{"{\"operations\": [{\"content\": \"}]{\"}]}\n", cutOff{}},
		{"{\"operations\": []}\n", cutOff{}},
		{"use {x} and [y here\n", cutOff{}},
		// A tag reply's fences are file content: its tags alone count.
		{"[CREATE_FILE path=\"a.md\"]\n```go\n[/CREATE_FILE]\n", cutOff{}},
	}
	for _, tc := range tests {
		path := filepath.Join(t.TempDir(), "r.txt")
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if cut, err := looksCutOff(path); err != nil || cut != tc.cut {
			t.Errorf("looksCutOff(%q) = %+v, %v; want %+v", tc.content, cut, err, tc.cut)
		}
	}
	long := strings.Repeat("x", 100<<10)
	path := filepath.Join(t.TempDir(), "r.txt")
	os.WriteFile(path, []byte("[CREATE_FILE path=\"x\"]\n"+long), 0o644)
	if cut, err := looksCutOff(path); err != nil || !cut.openMidLine() {
		t.Errorf("a long open block: %+v, %v", cut, err)
	}
}

// A complete reply waits while an older one is still being written, so
// replies are taken oldest first.
func TestTrackerKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	older := writeAt(t, dir, "a.txt", "[RUN_COMMAND]\nls\n", now.Add(-time.Minute))
	newer := writeAt(t, dir, "b.txt", "[DONE]\nok\n[/DONE]\n", now)
	tr := newTracker(time.Second, func(string) {})
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

// A closed reply that stops mid-line in an open block (a paste closed
// between its pieces) waits CutOffWait, not just the settle period; one
// whose open block ends with a newline waits the settle period only.
func TestTrackerWaitsLongerForAReplyCutMidLine(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	cut := writeAt(t, dir, "cut.txt", "[CREATE_FILE path=\"a.txt\"]\nfirst hal", now)
	tr := newTracker(time.Second, func(string) {})
	tr.observe(cut, now)
	tr.finished(cut, now, true)
	if got := tr.ready(now.Add(time.Second)); len(got) != 0 {
		t.Fatalf("ready after the settle period = %v, want nothing yet", got)
	}
	if due, ok := tr.nextDue(); !ok || !due.Equal(now.Add(CutOffWait)) {
		t.Errorf("nextDue = %v, %v; want %v", due, ok, now.Add(CutOffWait))
	}
	if got := tr.ready(now.Add(CutOffWait)); !slices.Equal(got, []string{cut}) {
		t.Errorf("ready after CutOffWait = %v, want %v", got, cut)
	}

	line := writeAt(t, dir, "line.txt", "[CREATE_FILE path=\"a.txt\"]\nfirst half\n", now)
	tr = newTracker(time.Second, func(string) {})
	tr.observe(line, now)
	if got := tr.ready(now.Add(time.Second)); !slices.Equal(got, []string{line}) {
		t.Errorf("ready after the settle period = %v, want %v", got, line)
	}
}

// An empty reply, closed, waits CutOffWait for a download to land in it,
// holding back no newer reply, and is then delivered, to be set aside with
// a message as 'courier process' sets it aside.
func TestTrackerDeliversAnEmptyReplyLater(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	empty := writeAt(t, dir, "a-empty.txt", "", now.Add(-time.Minute))
	newer := writeAt(t, dir, "b.txt", "[DONE]\nok\n[/DONE]\n", now)
	tr := newTracker(time.Second, func(string) {})
	tr.observe(empty, now)
	tr.observe(newer, now)
	tr.finished(empty, now, true)
	tr.finished(newer, now, true)
	if got := tr.ready(now); !slices.Equal(got, []string{newer}) {
		t.Fatalf("ready = %v, want only %v while the empty one waits", got, newer)
	}
	tr.delivered(newer, [32]byte{1})
	if got := tr.ready(now.Add(CutOffWait)); !slices.Equal(got, []string{empty}) {
		t.Errorf("ready after CutOffWait = %v, want %v", got, empty)
	}
}

// A reply its writer still has open is never due, however long it has
// been unchanged; once closed, it is.
func TestTrackerNeverTakesAReplyStillOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("open files are asked about on Linux only; elsewhere replies are delivered once they settle")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "reply.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("[CREATE_FILE path=\"a.txt\"]\nfirst half\n")
	now := time.Now()
	var notes []string
	tr := newTracker(time.Second, func(s string) { notes = append(notes, s) })
	tr.observe(path, now)
	if got := tr.ready(now.Add(24 * time.Hour)); len(got) != 0 {
		t.Fatalf("ready while the writer has it open = %v", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "still open for writing") {
		t.Errorf("notes = %q, want one saying the file is open", notes)
	}
	f.WriteString("[/CREATE_FILE]\n")
	f.Close()
	later := now.Add(25 * time.Hour)
	tr.observe(path, later)
	if got := tr.ready(later.Add(time.Second)); !slices.Equal(got, []string{path}) {
		t.Errorf("ready once closed = %v, want %v", got, path)
	}
}

// The case people met: a reply pasted into a file that stays open while
// they paste the rest, seconds later. With the default settings, watching
// by events or by polling, it is delivered once, complete.
func TestWatchWaitsForAWriterThatPauses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("open files are asked about on Linux only; elsewhere replies are delivered once they settle")
	}
	const first, rest = "[CREATE_FILE path=\"a.txt\"]\nfirst half\n", "second half\n[/CREATE_FILE]\n"
	for _, m := range []struct {
		name string
		opts WatchOptions
	}{{"events", WatchOptions{}}, {"poll", WatchOptions{Poll: true}}} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			r := startWatch(t, m.opts, nil, func(path string) { os.Remove(path) })
			f, err := os.Create(filepath.Join(r.dir, "reply.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.WriteString(first)
			time.Sleep(3 * time.Second)
			f.WriteString(rest)
			f.Close()
			r.expectOnly(delivery{"reply.txt", first + rest})
			if !strings.Contains(r.log.String(), "still open for writing") {
				t.Errorf("the log does not say why the reply waited:\n%s", r.log)
			}
		})
	}
}

// 'process' does not take a reply its writer still has open, nor one that
// stops mid-line in an open block and was written moments ago; an old one
// that looks so was cut off for good and is taken (its PARSE_ERROR tells
// the LLM).
func TestUnfinished(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	cut := "[CREATE_FILE path=\"a.txt\"]\nfirst hal"
	if why := unfinished(writeAt(t, dir, "new.txt", cut, now), now); !strings.Contains(why, "stops in the middle of a command block") {
		t.Errorf("a cut-off reply written just now: %q", why)
	}
	if why := unfinished(writeAt(t, dir, "old.txt", cut, now.Add(-time.Minute)), now); why != "" {
		t.Errorf("a cut-off reply written a minute ago: %q, want it taken", why)
	}
	if why := unfinished(writeAt(t, dir, "whole.txt", cut+"f\n[/CREATE_FILE]\n", now), now); why != "" {
		t.Errorf("a whole reply written just now: %q, want it taken", why)
	}
	if runtime.GOOS != "linux" {
		return
	}
	f, err := os.Create(filepath.Join(dir, "open.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("[DONE]\nok\n[/DONE]\n")
	if why := unfinished(f.Name(), now.Add(time.Hour)); !strings.Contains(why, "still open for writing") {
		t.Errorf("a reply open for writing: %q", why)
	}
}
