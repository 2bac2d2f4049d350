package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"strings"

	"github.com/courier-agent/courier/internal/workspace"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/history"
)

// A turn makes a run of file commands as one batch: each change is
// planned against the files as the earlier ones leave them (in memory)
// and recorded; only when something is about to look (a RUN_COMMAND, a
// question, a READ_FILE, the turn's end) is the run made: one record sync
// before, the files synced together, the results recorded after.

// maxPending bounds the new contents a batch holds in memory.
const maxPending = 64 << 20

type pendingKind int

const (
	pendingWrite pendingKind = iota
	pendingRemove
	// pendingKeep: found made after a crash, to be made durable.
	pendingKeep
)

// pendingFile is what the batch will do to one file, for which commands.
type pendingFile struct {
	kind    pendingKind
	data    string // never changed once held: planning reads it as is
	hash    string
	members []int
}

// landing is where a path lands: the nearest existing folder above it (by
// device and inode: symlinks and mounts count as one) and the rest of the
// path, case-folded (a case-insensitive disk).
type landing struct {
	dev, ino uint64
	rest     string
}

// batch is the changes recorded and not yet made, and the commands whose
// results wait to be recorded and reported, in order.
type batch struct {
	files map[string]*pendingFile // by clean path
	order []string
	lands map[landing]string // where each pending path lands
	above map[landing]bool   // the folders above pending paths
	queue []queued
	bytes int64
	alone bool         // the last change went through a symlink
	made  map[int]bool // changes recovery found made already
}

type queued struct {
	index  int
	record bool // the result is new
	start  bool // the observer hears the command start first
}

func newBatch() batch {
	return batch{files: map[string]*pendingFile{}, lands: map[landing]string{}, above: map[landing]bool{}, made: map[int]bool{}}
}

// pendingState is a file as the batch will leave it, if it has it.
func (b *batch) pendingState(clean string) (fileState, bool) {
	pf, ok := b.files[clean]
	if !ok || pf.kind == pendingKeep {
		return fileState{}, false
	}
	if pf.kind == pendingRemove {
		return fileState{}, true
	}
	return fileState{data: pf.data, hash: pf.hash, exists: true}, true
}

// admit makes what is pending first when a change of clean may touch a
// pending path under another name, or above or below one, or goes
// through a symlink: it is planned against the files as they are.
func (r *turnRun) admit(clean string) error {
	r.b.alone = false
	if _, ok := r.b.files[clean]; ok {
		return nil
	}
	if info, err := fs.Lstat(r.ws.FS(), clean); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		r.b.alone = true
		return r.flush()
	}
	l := r.land(clean)
	if _, ok := r.b.lands[l]; ok || r.b.above[l] {
		return r.flush()
	}
	for d := path.Dir(l.rest); d != "."; d = path.Dir(d) {
		if _, ok := r.b.lands[landing{l.dev, l.ino, d}]; ok {
			return r.flush()
		}
	}
	return nil
}

func (r *turnRun) land(clean string) landing {
	rest, d := path.Base(clean), path.Dir(clean)
	for {
		var l landing
		ok := false
		if info, err := r.ws.Stat(d); err == nil && info.IsDir() {
			l.dev, l.ino, ok = workspace.FileID(info)
		}
		if ok || d == "." {
			l.rest = strings.ToLower(rest)
			return l
		}
		rest, d = path.Base(d)+"/"+rest, path.Dir(d)
	}
}

// hold adds a recorded change of clean to the batch.
func (r *turnRun) hold(i int, clean string, kind pendingKind, data, hash string) error {
	pf, ok := r.b.files[clean]
	if !ok {
		pf = &pendingFile{kind: pendingKeep}
		r.b.files[clean] = pf
		r.b.order = append(r.b.order, clean)
		l := r.land(clean)
		r.b.lands[l] = clean
		for d := path.Dir(l.rest); d != "."; d = path.Dir(d) {
			r.b.above[landing{l.dev, l.ino, d}] = true
		}
	}
	if kind != pendingKeep || pf.kind == pendingKeep {
		r.b.bytes += int64(len(data)) - int64(len(pf.data))
		pf.kind, pf.data, pf.hash = kind, data, hash
	}
	pf.members = append(pf.members, i)
	r.queue(i, true)
	if r.b.alone || r.b.bytes > maxPending {
		return r.flush()
	}
	return nil
}

// queue adds a settled command to report; one carried out afresh is
// heard starting just before its result, one after the other.
func (r *turnRun) queue(i int, record bool) {
	r.b.queue = append(r.b.queue, queued{index: i, record: record, start: i == r.starting})
}

// flush makes the pending changes, then records and reports the queued
// results in order. A change the machine could not make (a full disk)
// stops the turn at its command with a *SystemError: the results before
// are recorded, the rest left for the next run of the turn.
func (r *turnRun) flush() error {
	defer func() { r.b = newBatch() }()
	// The turn keeps the batch's paths as they are before they change. A
	// change found made after a crash is recorded at once: what shows is
	// its own doing.
	var fresh []int
	var paths []string
	for _, q := range r.b.queue {
		ch := r.changes[q.index]
		switch {
		case !q.record || ch == nil:
		case r.b.made[q.index]:
			if err := r.changed(q.index, []string{ch.Path}, nil); err != nil {
				return err
			}
		default:
			fresh, paths = append(fresh, q.index), append(paths, ch.Path)
		}
	}
	if len(paths) > 0 {
		if err := r.t.Before(paths); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	var stop *SystemError
	if len(r.b.order) > 0 {
		// Write-ahead: the records are durable before any change is made.
		if err := r.t.Sync(); err != nil {
			return err
		}
		wb := r.ws.NewBatch()
		wb.StopOn = isSystem
		for _, p := range r.b.order {
			switch pf := r.b.files[p]; pf.kind {
			case pendingWrite:
				wb.Write(p, pf.data, 0)
			case pendingRemove:
				wb.Remove(p)
			case pendingKeep:
				wb.Keep(p)
			}
		}
		for k, done := range wb.Commit() {
			p := r.b.order[k]
			pf := r.b.files[p]
			if done.Err == nil || pf.kind == pendingRemove && errors.Is(done.Err, fs.ErrNotExist) {
				continue // a file created and deleted in one run is simply not there
			}
			delete(r.trackers, p)
			for _, i := range pf.members {
				switch res := r.results[i]; {
				case errors.Is(done.Err, workspace.ErrNotDone):
					// After the failure that stops the turn.
				case isSystem(done.Err):
					if stop == nil || i < stop.Index {
						stop = &SystemError{Session: r.st.SessionID, Index: i, Path: p, Err: done.Err}
					}
				default: // the changes the write carried fail
					res.Status, res.Summary = command.Failed, fmt.Sprintf("Cannot change '%s': %s", p, plainErr(done.Err))
					res.Diff, res.Added, res.Removed = "", 0, 0
					r.results[i] = res
				}
			}
		}
	}
	for _, i := range fresh {
		if err := r.changed(i, []string{r.changes[i].Path}, nil); err != nil {
			return err
		}
	}
	for _, q := range r.b.queue {
		if stop != nil && q.index >= stop.Index {
			return stop
		}
		res := r.results[q.index]
		if q.record {
			rec := history.Record{Kind: history.RecordResult, Index: q.index}
			if ch := r.changes[q.index]; ch != nil && reflect.DeepEqual(*ch.Result, res) {
				rec.AsPlanned = true
			} else {
				rec.Result = &res
			}
			if err := r.t.Add(rec); err != nil {
				return err
			}
		}
		if q.start {
			r.opts.Observer.Started(q.index, r.cmds[q.index])
		}
		r.report(q.index, res)
	}
	return nil
}
