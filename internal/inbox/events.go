package inbox

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

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
