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

// A turn carries out a run of file commands as one batch: each change is
// planned against the files as the earlier changes of the run leave them
// (held in memory), journaled, and only when something outside courier is
// about to look (a RUN_COMMAND, an approval question, a READ_FILE, the end
// of the turn) is the whole run made: one journal sync before, the files
// synced together, then the results recorded. See the history package for
// why that order is crash-safe.

// maxPending bounds the new contents a batch holds in memory before it is
// made.
const maxPending = 64 << 20

type pendingKind int

const (
	pendingWrite pendingKind = iota
	pendingRemove
	// pendingKeep is a change found made after a crash: the file is as it
	// should be, and only needs to be made durable before it is recorded.
	pendingKeep
)

// pendingFile is what the batch will do to one file, and the commands
// whose changes it carries.
type pendingFile struct {
	kind    pendingKind
	data    []byte // never changed once held: planning reads it as is
	hash    string
	members []int
}

// landing identifies where a path lands: the nearest existing folder above
// it (by device and inode, so folders reached through symlinks or mounts
// count as one) and the rest of the path, case-folded, since two spellings
// may be one file on a case-insensitive disk.
type landing struct {
	dev, ino uint64
	rest     string
}

type dirID struct {
	dev, ino uint64
	ok       bool
}

// batch is the file changes journaled and not yet made, and the commands
// whose results wait to be recorded and reported, in order.
type batch struct {
	files   map[string]*pendingFile // by clean path
	order   []string
	lands   map[landing]string // where each pending path lands
	above   map[landing]bool   // the folders above pending paths
	dirs    map[string]dirID   // folders looked up since the last flush
	queue   []queued
	bytes   int64
	alone   bool // the last change went through a symlink: make it at once
	changes bool // a change was journaled since the last flush
	// made are the changes recovery found made already (before a crash).
	made map[int]bool
}

type queued struct {
	index  int
	record bool // the result is new and goes into the journal
	start  bool // the observer hears the command start first
}

func newBatch() batch {
	return batch{files: map[string]*pendingFile{}, lands: map[landing]string{}, above: map[landing]bool{}, dirs: map[string]dirID{}, made: map[int]bool{}}
}

// pendingState is a file as the batch will leave it, if the batch has it.
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

// admit makes room in the batch for a change of clean: when the path may
// be the same file as another pending path under another name, or a folder
// above or below one, or goes through a symlink, what is pending is made
// first, so the change is planned against the files as they really are.
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
	if r.clashes(l) {
		if err := r.flush(); err != nil {
			return err
		}
	}
	return nil
}

// clashes reports whether a path landing at l may touch a pending path.
func (r *turnRun) clashes(l landing) bool {
	if _, ok := r.b.lands[l]; ok || r.b.above[l] {
		return true
	}
	for d := path.Dir(l.rest); d != "."; d = path.Dir(d) {
		if _, ok := r.b.lands[landing{l.dev, l.ino, d}]; ok {
			return true
		}
	}
	return false
}

// land finds where clean lands.
func (r *turnRun) land(clean string) landing {
	rest, d := path.Base(clean), path.Dir(clean)
	for {
		id, ok := r.b.dirs[d]
		if !ok {
			if info, err := r.ws.Stat(d); err == nil && info.IsDir() {
				id.dev, id.ino, id.ok = workspace.FileID(info)
			}
			r.b.dirs[d] = id
		}
		if id.ok || d == "." {
			return landing{id.dev, id.ino, strings.ToLower(rest)}
		}
		rest, d = path.Base(d)+"/"+rest, path.Dir(d)
	}
}

// hold adds a journaled change of clean to the batch: new content, a
// removal, or (after a crash) the file as it is.
func (r *turnRun) hold(i int, clean string, kind pendingKind, data []byte, hash string) error {
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
	r.b.changes = true
	r.queue(i, true)
	if r.b.alone || r.b.bytes > maxPending {
		return r.flush()
	}
	return nil
}

// queue adds a command whose result is settled to the ones to report. The
// observer hears a command carried out afresh start just before it hears
// the result, so that it hears the commands one after the other even
// though a batch makes them together.
func (r *turnRun) queue(i int, record bool) {
	r.b.queue = append(r.b.queue, queued{index: i, record: record, start: i == r.starting})
}

// flush makes the pending changes, then records and reports the queued
// results in order. A change the machine could not make (a full disk)
// stops it at that change's command with a *SystemError: the results
// before it are recorded, the command and those after it are left without
// one, for the next run of the turn to settle from the journal.
func (r *turnRun) flush() error {
	// Whatever happens, the batch is spent: a change it could not make
	// stays journaled without a result, for recovery to settle.
	defer func() { r.b = newBatch() }()
	// stop is the first command whose change the machine could not make:
	// the results before it are recorded, and the turn stops there.
	var stop *SystemError
	fresh, err := r.snapshotBefore()
	if err != nil {
		return err
	}
	if r.b.changes {
		// Write-ahead: the changes' records (and the contents kept for
		// them) are durable before any of them is made.
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
		for k, res := range wb.Commit() {
			p := r.b.order[k]
			gone := r.b.files[p].kind == pendingRemove && errors.Is(res.Err, fs.ErrNotExist)
			switch {
			case res.Err == nil || gone: // a file created and deleted in one run is simply not there
			case errors.Is(res.Err, workspace.ErrNotDone):
				// After the failure that stops the turn: left journaled
				// and unmade, for the next run of the turn.
				r.trackers.drop(p)
			case isSystem(res.Err):
				r.trackers.drop(p)
				for _, i := range r.b.files[p].members {
					if stop == nil || i < stop.Index {
						stop = &SystemError{Session: r.st.SessionID, Index: i, Path: p, Err: res.Err}
					}
				}
			default:
				r.failMembers(p, res.Err)
			}
		}
	}
	for _, q := range fresh {
		if err := r.changed(q.index, q.paths, nil); err != nil {
			return err
		}
	}
	for _, q := range r.b.queue {
		if stop != nil && q.index >= stop.Index {
			return stop
		}
		res := r.js.results[q.index]
		if q.record {
			rec := history.Record{Kind: history.RecordResult, Index: q.index}
			if ch := r.js.changes[q.index]; ch != nil && reflect.DeepEqual(*ch.Result, res) {
				rec.AsPlanned = true
			} else {
				rec.Result = &res
			}
			if err := r.t.Add(rec); err != nil {
				return err
			}
		}
		if q.start && r.opts.Observer != nil {
			r.opts.Observer.Started(q.index, r.cmds[q.index])
		}
		r.report(q.index, res)
	}
	return nil
}

// failMembers marks the changes a failed write carried as failed.
func (r *turnRun) failMembers(p string, err error) {
	r.trackers.drop(p)
	for _, i := range r.b.files[p].members {
		res := r.js.results[i]
		res.Status = command.Failed
		res.Summary = fmt.Sprintf("Cannot change '%s': %s", p, plainErr(err))
		res.Diff, res.Added, res.Removed = "", 0, 0
		r.js.results[i] = res
	}
}

// snapshotted is a file command of the batch and the path it changes.
type snapshotted struct {
	index int
	paths []string
}

// snapshotBefore has the turn keep the batch's paths as they are before
// the batch changes them, and returns the commands whose changes to record
// after. A change recovery found made already (before a crash) is recorded
// at once: what the workspace shows of it is its own doing.
func (r *turnRun) snapshotBefore() ([]snapshotted, error) {
	var fresh []snapshotted
	var paths []string
	for _, q := range r.b.queue {
		c := r.cmds[q.index]
		clean, err := workspace.Clean(c.Path)
		if !c.ChangesFiles() || !q.record || err != nil || r.js.changes[q.index] == nil {
			continue
		}
		if r.b.made[q.index] {
			if err := r.changed(q.index, []string{clean}, nil); err != nil {
				return nil, err
			}
			continue
		}
		fresh = append(fresh, snapshotted{q.index, []string{clean}})
		paths = append(paths, clean)
	}
	if len(paths) > 0 {
		if err := r.t.Before(paths); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
	}
	return fresh, nil
}
