package inbox

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// startEvents watches the folder (never single files, which editors replace
// by renaming) with fsnotify, or notes why it polls instead.
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
	// Without close events (other systems, inotify limits) a reply is
	// delivered once it has settled, as when polling; that is quiet, as
	// nothing is lost but time.
	w.closed, _ = startClosed(w.dir)
}

// stopEvents closes the fsnotify watcher, which also ends its goroutine.
func (w *watcher) stopEvents() {
	if w.events != nil {
		w.events.Close()
	}
	w.closed.stop()
}

// eventChannels returns fsnotify's channels, or nil channels (which never
// fire) when polling.
func (w *watcher) eventChannels() (<-chan fsnotify.Event, <-chan error) {
	if w.events == nil {
		return nil, nil
	}
	return w.events.Events, w.events.Errors
}

// handleEvent re-examines the file an event names. Every kind of event is
// treated the same: Create, the Writes that follow it, a rename into place
// or away, or Chmod noise all lead to a stat, and only a real change of the
// file restarts its settle period.
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

// handleClosed takes a file its writer closed, or that was moved into the
// folder: it is complete now, and is delivered without waiting to settle
// unless it looks cut off.
func (w *watcher) handleClosed(name string) {
	if filepath.Dir(name) != w.dir || !IsReply(name) {
		return
	}
	w.files.finished(name, time.Now(), true)
}

// handleEventError recovers from lost events by listing the folder: an
// overflowed event queue drops events, and so may any other failure.
func (w *watcher) handleEventError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.notef("file events overflowed; rescanning %s", w.dir)
	} else {
		w.notef("file events: %v; rescanning %s", err, w.dir)
	}
	w.rescan()
}

// rewatch tries to watch the folder again after it was removed or renamed.
func (w *watcher) rewatch() {
	w.events.Remove(w.dir) // drop any stale watch; an error means none was left
	if err := w.events.Add(w.dir); err != nil {
		return
	}
	w.closed.add() // the settle time covers a failure
	w.dirLost = false
	w.notef("watching %s again", w.dir)
}
