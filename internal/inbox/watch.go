package inbox

import (
	"context"
	"errors"
	"fmt"
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

func (o WatchOptions) withDefaults() WatchOptions {
	if o.Interval <= 0 {
		o.Interval = 500 * time.Millisecond
	}
	if o.Rescan <= 0 {
		o.Rescan = 2 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = config.DefaultSettle
	}
	return o
}

// Watch calls deliver with the path of each complete reply file in dir,
// oldest first, until ctx is done or deliver fails. On Linux a file is
// complete when moved in, closed by its writer, or found by a listing with
// no writer, unless it looks cut off; otherwise once unchanged for Settle
// and not open for writing. A file is delivered again only if its content
// changes.
func Watch(ctx context.Context, dir string, opts WatchOptions, deliver func(path string) error) error {
	dir = filepath.Clean(dir)
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("watch inbox: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("watch inbox: %s is not a folder", dir)
	}
	opts = opts.withDefaults()
	w := &watcher{dir: dir, opts: opts, deliver: deliver, files: newTracker(opts.Settle)}
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
	for _, note := range w.files.takeNotes() {
		w.notef("%s", note)
	}
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
		w.files.record(r.path, r.info, now)
	}
	w.files.keepOnly(present)
	return nil
}

// rescan is the periodic listing; a failure is reported once and retried,
// as a network folder may come back.
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

// takeUnwritten takes the files a listing found that no one writes as
// complete, with close events; polled folders may not tell, so wait.
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

// startEvents watches the folder (not its files, which editors replace by
// renaming), or notes why it polls instead.
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

// handleEvent re-examines the file an event names, whatever the event:
// only a real change restarts its settle period.
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
