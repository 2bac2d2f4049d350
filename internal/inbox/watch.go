package inbox

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/courier-agent/courier/internal/config"
)

// WatchOptions tunes Watch; the zero value watches with file events.
type WatchOptions struct {
	Poll     bool          // list the folder every Interval, not using file events
	Interval time.Duration // default 500ms
	// Rescan is the period of the listing beside file events, which finds
	// files whose events never arrive, as on network filesystems (2s).
	Rescan time.Duration
	// Settle is how long a file must stay unchanged before it is delivered
	// (config.DefaultSettle).
	Settle time.Duration
	// MaxReply bounds what the Watcher reads of a reply file (0: the
	// runner's limit).
	MaxReply int64
	// Warn is told, in a line, whenever Watch changes how it watches
	// (polling, rescanning after lost events, an unreadable folder or file).
	Warn func(string)
}

// Watch calls deliver with the path of each complete reply file in dir,
// oldest first, until ctx is done or deliver fails; again only if its
// content changes. Complete: on Linux, moved in, closed by its writer or
// listed with none, unless it looks cut off; else unchanged for Settle.
func Watch(ctx context.Context, dir string, opts WatchOptions, deliver func(path string) error) error {
	dir = filepath.Clean(dir)
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("watch inbox: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("watch inbox: %s is not a folder", dir)
	}
	opts.Interval = cmp.Or(max(opts.Interval, 0), 500*time.Millisecond)
	opts.Rescan = cmp.Or(max(opts.Rescan, 0), 2*time.Second)
	opts.Settle = cmp.Or(max(opts.Settle, 0), config.DefaultSettle)
	w := &watcher{dir: dir, opts: opts, deliver: deliver}
	w.files = newTracker(opts.Settle, func(s string) { w.notef("%s", s) })
	if !opts.Poll {
		w.startEvents()
	}
	defer w.stopEvents()
	return w.run(ctx)
}

// watcher is the state of one Watch call.
type watcher struct {
	dir     string
	opts    WatchOptions
	deliver func(string) error
	files   *tracker
	events  *fsnotify.Watcher // nil when polling
	// closed reports files closed by their writer or moved in (Linux); nil
	// when unavailable, and then every file waits to settle.
	closed *closedEvents
	// dirLost: the folder was removed or renamed; rescans watch it again.
	dirLost bool
	scanErr string // last listing failure, reported once
}

func (w *watcher) run(ctx context.Context) error {
	if err := w.scan(time.Now()); err != nil {
		return err
	}
	w.takeUnwritten()
	period, events, errs := w.opts.Interval, (<-chan fsnotify.Event)(nil), (<-chan error)(nil)
	if w.events != nil {
		period, events, errs = w.opts.Rescan, w.events.Events, w.events.Errors
	}
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	closed := w.closed.channel()
	for {
		if err := w.deliverReady(ctx); err != nil {
			return err
		}
		w.arm(timer)
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			w.handleEvent(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.handleEventError(err)
		case name, ok := <-closed:
			if !ok {
				closed = nil
				continue
			}
			w.handleClosed(name)
		case <-ticker.C:
			w.rescan()
		case <-timer.C:
		}
	}
}

// arm sets timer to fire when the next waiting file settles.
func (w *watcher) arm(timer *time.Timer) {
	next, ok := w.files.nextDue()
	if !ok {
		timer.Stop()
		return
	}
	timer.Reset(max(time.Until(next), 0))
}

// deliverReady hands over every settled file, oldest first.
func (w *watcher) deliverReady(ctx context.Context) error {
	ready := w.files.ready(time.Now())
	for _, path := range ready {
		if ctx.Err() != nil {
			return nil
		}
		sum, ok, err := w.files.confirm(path, time.Now())
		if err != nil {
			w.notef("cannot read %s yet: %v", path, err)
		}
		if !ok {
			continue
		}
		if err := w.deliver(path); err != nil {
			return err
		}
		w.files.delivered(path, sum)
	}
	return nil
}

func (w *watcher) scan(now time.Time) error {
	found, err := listReplies(w.dir)
	if err != nil {
		return err
	}
	present := make(map[string]bool, len(found))
	for _, r := range found {
		present[r.path] = true
		w.files.observe(r.path, now)
	}
	for path := range w.files.files {
		if !present[path] {
			delete(w.files.files, path)
		}
	}
	return nil
}

// rescan lists the folder; a failure is told once, as it may come back.
func (w *watcher) rescan() {
	if w.dirLost {
		w.rewatch()
	}
	err := w.scan(time.Now())
	w.takeUnwritten()
	switch {
	case err != nil && err.Error() != w.scanErr:
		w.scanErr = err.Error()
		w.notef("%v; retrying", err)
	case err == nil && w.scanErr != "":
		w.scanErr = ""
		w.notef("inbox %s is readable again", w.dir)
	}
}

// takeUnwritten: with close events, listed files no one writes are complete.
func (w *watcher) takeUnwritten() {
	if w.closed != nil {
		w.files.unwritten(time.Now())
	}
}

func (w *watcher) notef(format string, args ...any) {
	if w.opts.Warn != nil {
		w.opts.Warn(fmt.Sprintf(format, args...))
	}
}

// startEvents watches the folder (editors replace files), or says why not.
func (w *watcher) startEvents() {
	ev, err := fsnotify.NewWatcher()
	if err == nil {
		if err = ev.Add(w.dir); err != nil {
			ev.Close()
		}
	}
	if err != nil {
		w.notef("file events unavailable (%v); polling %s every %s", err, w.dir, w.opts.Interval)
		return
	}
	w.events = ev
	w.closed, _ = startClosed(w.dir) // without, replies settle: quietly, as only time is lost
}

func (w *watcher) stopEvents() {
	if w.events != nil {
		w.events.Close()
	}
	w.closed.stop()
}

// handleEvent looks again at the file an event names, whatever the event.
func (w *watcher) handleEvent(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	if name == w.dir {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.dirLost = true
			w.notef("inbox %s was removed or renamed; waiting for it to return", w.dir)
		}
		return
	}
	if filepath.Dir(name) != w.dir || !IsReply(name) {
		return
	}
	w.files.observe(name, time.Now())
}

// handleClosed takes a file closed by its writer or moved in as complete.
func (w *watcher) handleClosed(name string) {
	if filepath.Dir(name) != w.dir || !IsReply(name) {
		return
	}
	w.files.finished(name, time.Now(), true)
}

// handleEventError recovers from lost events by listing the folder.
func (w *watcher) handleEventError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.notef("file events overflowed; rescanning %s", w.dir)
	} else {
		w.notef("file events: %v; rescanning %s", err, w.dir)
	}
	w.rescan()
}

func (w *watcher) rewatch() {
	w.events.Remove(w.dir) // drop any stale watch; an error means none was left
	if err := w.events.Add(w.dir); err != nil {
		return
	}
	w.closed.add() // the settle time covers a failure
	w.dirLost = false
	w.notef("watching %s again", w.dir)
}

// entry is what the tracker knows about one candidate file.
type entry struct {
	// seen is the file's state as stat saw it: a change of size, mtime or
	// identity (an editor's atomic replace) restarts its settle period.
	seen  fs.FileInfo
	since time.Time // when seen was first observed
	// done: seen was delivered, or holds what was delivered last.
	done      bool
	delivered bool
	// complete: seen is whole (closed by its writer, or moved in) and does
	// not look cut off; it need not settle.
	complete bool
	// recheck is when a settled file not due yet (still open for writing,
	// or cut off) is looked at again.
	recheck   time.Time
	openNoted bool              // the person was told it is still open
	sum       [sha256.Size]byte // content of the last delivery
	readErr   string            // last read failure, reported once
}

// tracker decides when candidate files have settled; one goroutine uses it.
type tracker struct {
	settle time.Duration
	files  map[string]*entry
	note   func(string) // tells the person about a file that waits
}

func newTracker(settle time.Duration, note func(string)) *tracker {
	return &tracker{settle: settle, note: note, files: make(map[string]*entry)}
}

// observe records path's state at now, reporting whether it changed.
func (t *tracker) observe(path string, now time.Time) bool {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		// Gone (moved to processed/), unreadable or no file: nothing to deliver.
		_, had := t.files[path]
		delete(t.files, path)
		return had
	}
	e := t.files[path]
	if e == nil {
		e = &entry{}
		t.files[path] = e
	} else if e.seen.Size() == info.Size() && e.seen.ModTime().Equal(info.ModTime()) && os.SameFile(e.seen, info) {
		return false
	}
	e.seen, e.since, e.done, e.complete = info, now, false, false
	e.recheck, e.openNoted = time.Time{}, false
	return true
}

// finished takes path, closed by a writer or moved in (closed) or listed,
// as ready unless written or cut off; listed, only when surely unwritten.
func (t *tracker) finished(path string, now time.Time, closed bool) {
	t.observe(path, now)
	e := t.files[path]
	if e == nil || e.done || e.complete || e.empty() {
		return
	}
	if writing, err := beingWritten(path); writing || (err != nil && !closed) {
		return
	}
	if cut, err := looksCutOff(path); err == nil && !cut.open {
		e.complete = true
	}
}

// unwritten takes listed files no one writes (events lost, or before Watch).
func (t *tracker) unwritten(now time.Time) {
	for path, e := range t.files {
		if !e.done && !e.complete {
			t.finished(path, now, false)
		}
	}
}

// empty: browsers make the final name empty before the download lands, so
// an empty file is never complete; it waits CutOffWait, holding none back.
func (e *entry) empty() bool { return e.seen.Size() == 0 }

// ready lists the files to deliver now, oldest write first: a due file
// waits while an older one is not due, so replies keep their order.
func (t *tracker) ready(now time.Time) []string {
	var rs []reply
	for path, e := range t.files {
		if !e.done {
			rs = append(rs, reply{path: path, info: e.seen})
		}
	}
	sortOldestFirst(rs)
	var paths []string
	for _, r := range rs {
		if e := t.files[r.path]; !t.due(r.path, e, now) {
			if e.empty() {
				continue
			}
			break
		}
		paths = append(paths, r.path)
	}
	return paths
}

// due reports whether path may be delivered at now: complete, or settled,
// not open for writing (a paste into 'cat > inbox/x.txt' pauses) and not
// cut off mid-line in an open block (that waits CutOffWait).
func (t *tracker) due(path string, e *entry, now time.Time) bool {
	if e.complete {
		return true
	}
	if now.Before(e.since.Add(t.settle)) || now.Before(e.recheck) {
		return false
	}
	if writing, _ := beingWritten(path); writing {
		e.recheck = now.Add(t.settle)
		if !e.openNoted {
			e.openNoted = true
			t.note(fmt.Sprintf("waiting for %s: it is still open for writing; it is taken once its writer closes it", path))
		}
		return false
	}
	if cut, err := looksCutOff(path); e.empty() || (err == nil && cut.openMidLine()) {
		if until := e.since.Add(max(t.settle, CutOffWait)); now.Before(until) {
			e.recheck = until
			return false
		}
	}
	return true
}

// nextDue reports when ready may next list more files, if ever.
func (t *tracker) nextDue() (time.Time, bool) {
	var next, now time.Time
	found, complete := false, false
	for _, e := range t.files {
		switch {
		case e.done:
		case e.complete:
			complete, now = true, e.since
		default:
			due := e.since.Add(t.settle)
			if e.recheck.After(due) {
				due = e.recheck
			}
			if !found || due.Before(next) {
				next, found = due, true
			}
		}
	}
	if !found && complete {
		return now, true
	}
	return next, found
}

// confirm checks that a ready file is unchanged, readable and new, and
// returns its checksum; a read failure is returned once, retried later.
func (t *tracker) confirm(path string, now time.Time) ([sha256.Size]byte, bool, error) {
	var zero [sha256.Size]byte
	e := t.files[path]
	if e == nil || t.observe(path, now) {
		return zero, false, nil
	}
	sum, err := hashFile(path)
	if err != nil {
		return zero, false, t.readFailed(path, e, err, now)
	}
	e.readErr = ""
	if t.observe(path, now) {
		return zero, false, nil // written to while being read
	}
	if e.delivered && sum == e.sum {
		e.done = true
		return zero, false, nil
	}
	return sum, true, nil
}

func (t *tracker) readFailed(path string, e *entry, err error, now time.Time) error {
	e.since, e.complete, e.recheck = now, false, time.Time{} // back off for one settle period
	if t.observe(path, now) || errors.Is(err, fs.ErrNotExist) {
		return nil // changed or gone: not worth a report
	}
	if err.Error() == e.readErr {
		return nil
	}
	e.readErr = err.Error()
	return err
}

func (t *tracker) delivered(path string, sum [sha256.Size]byte) {
	if e := t.files[path]; e != nil {
		e.done, e.delivered, e.sum = true, true, sum
	}
}

func hashFile(path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, fmt.Errorf("read reply: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, fmt.Errorf("read reply: %w", err)
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// blockTags are the reply commands that have a body and a closing tag.
var blockTags = [][]byte{[]byte("CREATE_FILE"), []byte("EDIT_FILE"), []byte("RUN_COMMAND"), []byte("MESSAGE"), []byte("DONE")}

// maxCutOffScan bounds what looksCutOff reads; a larger reply is cut off.
const maxCutOffScan = 64 << 20

// CutOffWait is how long a reply cut off mid-line in an open block waits
// from its last change: a save in several goes looks so between pieces.
const CutOffWait = 5 * time.Second

// cutOff is how a reply ends: in an open block, without a newline.
type cutOff struct {
	open, midLine bool
}

// openMidLine is the surest sign of a write that has not finished.
func (c cutOff) openMidLine() bool { return c.open && c.midLine }

// looksCutOff reports how a reply ends; one the chat cut off waits a bit.
func looksCutOff(path string) (cutOff, error) {
	f, err := os.Open(path)
	if err != nil {
		return cutOff{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return cutOff{}, err
	}
	var c cutOff
	if size := info.Size(); size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return cutOff{}, err
		}
		c.midLine = last[0] != '\n'
	}
	if info.Size() > maxCutOffScan {
		c.open = true
		return c, nil
	}
	c.open, err = openBlockAtEnd(f)
	return c, err
}

// openBlockAtEnd reports whether a block is open at a reply's end, tags
// matched as the parser does; a reply without tags is open inside a code
// fence or, bare JSON, inside its object.
func openBlockAtEnd(f *os.File) (bool, error) {
	var open, tagged, fenced, bare bool
	first := true
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<10), maxCutOffScan)
	for sc.Scan() {
		line := bytes.TrimLeft(sc.Bytes(), " \t")
		if first && len(line) > 0 {
			first = false
			bare = line[0] == '{'
		}
		if bytes.HasPrefix(line, []byte("```")) {
			fenced = !fenced
		}
		if len(line) < 2 || line[0] != '[' {
			continue
		}
		name, closing := bytes.CutPrefix(line[1:], []byte("/"))
		for _, t := range blockTags {
			if len(name) >= len(t) && bytes.EqualFold(name[:len(t)], t) && (len(name) == len(t) || name[len(t)] == ']' || name[len(t)] == ' ') {
				open, tagged = !closing, true
			}
		}
	}
	if err := sc.Err(); err != nil || tagged || fenced || !bare {
		return open || (!tagged && fenced), err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	return errors.Is(json.NewDecoder(f).Decode(new(json.RawMessage)), io.ErrUnexpectedEOF), nil
}
