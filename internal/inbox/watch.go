package inbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/courier-agent/courier/internal/config"
)

// Defaults for the zero fields of WatchOptions.
const (
	DefaultInterval = 500 * time.Millisecond
	DefaultRescan   = 2 * time.Second
)

// WatchOptions tunes Watch. The zero value watches with file events.
type WatchOptions struct {
	// Poll lists the folder every Interval instead of using file events.
	Poll bool
	// Interval is the polling period (default DefaultInterval).
	Interval time.Duration
	// Rescan is the period of the safety listing done alongside file
	// events, which finds files whose events never arrive, as on network
	// and virtual filesystems (default DefaultRescan).
	Rescan time.Duration
	// Settle is how long a file must stay unchanged (size, modification
	// time and identity) before it is delivered (default the settle
	// setting's, config.DefaultSettle).
	Settle time.Duration
	// MaxReply bounds what the inbox source built with these options reads
	// of a reply file (0: the runner's limit, which settling a recovered
	// turn's reply does without).
	MaxReply int64
	// Warn, if set, is told in one line whenever Watch changes how it
	// watches: falling back to polling, rescanning after lost events, an
	// unreadable folder or file. It is called from Watch's goroutine.
	Warn func(string)
}

func (o WatchOptions) withDefaults() WatchOptions {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Rescan <= 0 {
		o.Rescan = DefaultRescan
	}
	if o.Settle <= 0 {
		o.Settle = config.DefaultSettle
	}
	return o
}

// Watch calls deliver with the path of each complete reply file in dir until
// ctx is done, and then returns nil. It starts with the files already there,
// oldest first.
//
// A file is delivered as soon as it is complete: on Linux with file events,
// when it is moved into dir (a browser's download, an editor's save by
// rename, mv), when its writer closes it, or, for a file found by listing
// the folder (one saved just before Watch began), when no process has it
// open for writing; unless it still looks cut off (its last command block
// open) or another writer still has it open. Otherwise, when polling, and
// on other systems, it is delivered once it has stayed unchanged for
// Settle and no process has it open for writing (where that can be told);
// one that stops mid-line in an open block waits CutOffWait. Either way a
// reply written in pieces is delivered once, whole,
// and replies are delivered oldest first. A file is delivered again only
// if its content changes later; a file that is removed and reappears
// counts as new. An empty file waits CutOffWait for content, holding no
// other back, and is then delivered as it is. Just before
// each delivery Watch checks that the file still exists and is readable,
// so a file moved away (to processed/) is not delivered.
//
// deliver runs on Watch's goroutine: while it runs nothing else is delivered,
// and changes it makes to the folder (moving the file away) are seen before
// the next delivery. If deliver returns an error, Watch stops and returns it
// unchanged.
//
// If file events cannot be set up (inotify limits, unsupported filesystem)
// Watch warns of it and polls instead.
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
	if !w.opts.Poll {
		w.startEvents()
	}
	defer w.stopEvents()
	return w.run(ctx)
}

// watcher is the state of one Watch call; only Watch's goroutine uses it.
type watcher struct {
	dir     string
	opts    WatchOptions
	deliver func(string) error
	files   *tracker
	events  *fsnotify.Watcher // nil when polling
	// closed reports files their writer closed or that were moved in
	// (Linux); nil when polling or unavailable, and then every file
	// waits for the settle period.
	closed *closedEvents
	// dirLost is set when the folder itself was removed or renamed, which
	// ends its event watch; rescans try to watch it again.
	dirLost bool
	scanErr string // last listing failure, so it is reported once
}

func (w *watcher) run(ctx context.Context) error {
	if err := w.scan(time.Now()); err != nil {
		return err
	}
	w.takeUnwritten()
	ticker := time.NewTicker(w.scanPeriod())
	defer ticker.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	events, errs := w.eventChannels()
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

// scanPeriod is how often the folder is listed: constantly when polling,
// rarely as a safety net beside file events.
func (w *watcher) scanPeriod() time.Duration {
	if w.events == nil {
		return w.opts.Interval
	}
	return w.opts.Rescan
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

// scan lists the folder and records the state of every candidate in it.
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

// rescan is the periodic listing; failures are reported once and retried,
// since a network folder may come back.
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

// takeUnwritten, with close events, takes the files a listing found that
// no one is writing as complete (see tracker.unwritten). Polling waits for
// every file to settle, as network folders offer no way to tell.
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
