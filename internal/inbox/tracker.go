package inbox

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

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
	notes  []string // lines for the person about files that wait
}

func newTracker(settle time.Duration) *tracker {
	return &tracker{settle: settle, files: make(map[string]*entry)}
}

// observe stats path and records its state at now, reporting whether it
// differs from what was recorded (a new file, a change, a removal).
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

// finished records that path was just closed by a writer or moved in
// (closed), or found by a listing: unless another writer has it open or it
// looks cut off, it is ready at once. A file found by a listing counts
// only when it is sure that no one writes it.
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

// unwritten takes the waiting files no one has open for writing as
// complete, for files a listing found: saved before Watch began, or whose
// events were lost.
func (t *tracker) unwritten(now time.Time) {
	for path, e := range t.files {
		if !e.done && !e.complete {
			t.finished(path, now, false)
		}
	}
}

func (t *tracker) keepOnly(present map[string]bool) {
	for path := range t.files {
		if !present[path] {
			delete(t.files, path)
		}
	}
}

// empty reports whether e's file is empty. Browsers create the final name
// empty before the download lands: an empty file is never complete, waits
// CutOffWait, holding no other back, and is then delivered (and set aside).
func (e *entry) empty() bool { return e.seen.Size() == 0 }

// ready lists the files to deliver now, oldest write first: a due file
// waits while an older one is not due (see due), so that replies are never
// delivered out of order.
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

// due reports whether the waiting file path may be delivered at now: once
// complete, or unchanged for the settle period, not open for writing
// (however long its writer pauses, as a paste into 'cat > inbox/x.txt'
// does) and not cut off mid-line in an open block (that waits CutOffWait).
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

func (t *tracker) takeNotes() []string {
	n := t.notes
	t.notes = nil
	return n
}

// nextDue reports when ready may next list more files: when the earliest
// file not yet due is looked at again, or at once when all are complete.
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

// confirm checks, just before delivery, that a ready file still exists
// unchanged and readable, holding content not delivered before, and
// returns its checksum. A read failure is returned once, and retried
// after another settle period.
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

// maxCutOffScan bounds how much of a file looksCutOff reads; a larger
// reply counts as cut off and waits to settle.
const maxCutOffScan = 64 << 20

// CutOffWait is how long a reply that stops mid-line in an open block
// waits from its last change: a save in several goes looks so between
// its pieces.
const CutOffWait = 5 * time.Second

// cutOff is how a reply ends: in an open block, without a newline.
type cutOff struct {
	open, midLine bool
}

// openMidLine is the surest sign of a write that has not finished.
func (c cutOff) openMidLine() bool { return c.open && c.midLine }

// looksCutOff reports how a reply ends: a reply the chat cut off looks
// like a save under way, and then waiting costs little.
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
// matched as the parser finds them (line start, after blanks, any case).
// A reply without tags may be JSON: open when it ends in a code fence or,
// bare, inside its object.
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
