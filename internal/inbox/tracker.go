package inbox

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// version is one state of a file as stat sees it. A change of size, mtime or
// identity (an editor's atomic replace makes a new file) means the file is
// still being written and its settle period starts again.
type version struct {
	info fs.FileInfo
}

func (v version) same(o version) bool {
	if v.info == nil || o.info == nil {
		return v.info == o.info
	}
	return v.info.Size() == o.info.Size() &&
		v.info.ModTime().Equal(o.info.ModTime()) &&
		os.SameFile(v.info, o.info)
}

// entry is what the tracker knows about one candidate file.
type entry struct {
	seen  version
	since time.Time // when seen was first observed
	// done means seen needs no delivery: it was delivered, or its content
	// equals what was delivered last.
	done      bool
	delivered bool
	// complete means seen is whole: its writer closed it, or it was
	// moved in, and it does not look cut off. It is delivered without
	// waiting for the settle period.
	complete bool
	// recheck is when a settled file that was not due yet (a writer still
	// had it open, or it stopped mid-line in an open block) is looked at
	// again.
	recheck time.Time
	// openNoted is set once the person was told that seen is still open
	// for writing.
	openNoted bool
	sum       [sha256.Size]byte // content of the last delivery
	readErr   string            // last read failure, so it is reported once
}

// tracker decides when candidate files have settled. It is used from one
// goroutine only.
type tracker struct {
	settle time.Duration
	files  map[string]*entry
	// notes are lines for the person about files that wait (see ready),
	// taken by the watcher.
	notes []string
}

func newTracker(settle time.Duration) *tracker {
	return &tracker{settle: settle, files: make(map[string]*entry)}
}

// observe stats path and records its state at now. It reports whether the
// state differs from what was recorded (a new file, a change, or removal).
func (t *tracker) observe(path string, now time.Time) bool {
	info, err := os.Lstat(path)
	if err != nil {
		// Gone (moved to processed/) or unreadable: nothing to deliver.
		_, had := t.files[path]
		delete(t.files, path)
		return had
	}
	return t.record(path, info, now)
}

// record notes info as the state of path at now and reports whether it
// changed.
func (t *tracker) record(path string, info fs.FileInfo, now time.Time) bool {
	if !info.Mode().IsRegular() {
		_, had := t.files[path]
		delete(t.files, path)
		return had
	}
	v := version{info: info}
	e := t.files[path]
	if e == nil {
		e = &entry{}
		t.files[path] = e
	} else if e.seen.same(v) {
		return false
	}
	e.seen, e.since, e.done, e.complete = v, now, false, false
	e.recheck, e.openNoted = time.Time{}, false
	return true
}

// finished records that path was just closed by a writer or moved in
// whole (closed), or was found by a listing: unless another writer still
// has it open or it looks cut off, it is ready at once. A file found by a
// listing counts only when it is sure that no one writes it.
func (t *tracker) finished(path string, now time.Time, closed bool) {
	t.observe(path, now)
	e := t.files[path]
	if e == nil || !e.waiting() || e.complete || e.empty() {
		return
	}
	if writing, err := beingWritten(path); writing || (err != nil && !closed) {
		return
	}
	if cut, err := looksCutOff(path); err == nil && !cut.open {
		e.complete = true
	}
}

// unwritten takes the waiting files that no one has open for writing as
// complete, for those found by a listing rather than by their events: a
// reply saved just before Watch began, or whose events were lost.
func (t *tracker) unwritten(now time.Time) {
	for path, e := range t.files {
		if e.waiting() && !e.complete {
			t.finished(path, now, false)
		}
	}
}

// keepOnly forgets files that a listing no longer shows.
func (t *tracker) keepOnly(present map[string]bool) {
	for path := range t.files {
		if !present[path] {
			delete(t.files, path)
		}
	}
}

// waiting reports whether e still has a version to deliver.
func (e *entry) waiting() bool {
	return !e.done
}

// empty reports whether e's file is empty. Browsers create the final name
// empty before the download lands: an empty file is never complete, waits
// CutOffWait, and holds back no other file meanwhile. One that stays
// empty is delivered, to be set aside as an empty reply is, saying so.
func (e *entry) empty() bool {
	return e.seen.info.Size() == 0
}

// ready lists the files to deliver now, in the order the protocol
// processes replies: oldest write first. A file is due once it is
// complete, or once it has been unchanged for the settle period, no one
// has it open for writing, and it does not stop mid-line in an open block
// (that waits CutOffWait); a due file waits while an older one is not due,
// so replies are never delivered out of order.
func (t *tracker) ready(now time.Time) []string {
	var rs []reply
	for path, e := range t.files {
		if e.waiting() {
			rs = append(rs, reply{path: path, info: e.seen.info})
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

// due reports whether the waiting file path may be delivered at now. A
// file still open for writing is never due, however long its writer
// pauses: a paste into 'cat > inbox/reply.txt' ends with Ctrl-D, and its
// close makes the file complete (see finished). Where that cannot be told
// (network folders, other systems), the settle period decides.
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
			t.notes = append(t.notes, fmt.Sprintf("waiting for %s: it is still open for writing; it is taken once its writer closes it", path))
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

// takeNotes returns the lines for the person gathered since the last call.
func (t *tracker) takeNotes() []string {
	n := t.notes
	t.notes = nil
	return n
}

// nextDue reports when ready may next list more files: when the earliest
// file not yet due is looked at again, or, when every waiting file is
// complete, at once.
func (t *tracker) nextDue() (time.Time, bool) {
	var next, now time.Time
	found, complete := false, false
	for _, e := range t.files {
		switch {
		case !e.waiting():
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

// confirm checks, just before delivery, that a ready file still exists, is
// unchanged, is readable, and holds content not delivered before. It
// returns the content's checksum when the file should be delivered. A read
// failure is returned once per distinct failure, and retried after another
// settle period.
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

// delivered records that path was handed over with content sum.
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
