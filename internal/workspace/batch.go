package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// Batch gathers file writes and removals and makes them durable together,
// for a caller that has first recorded them where a recovery will find
// them (courier's turn journal). Commit writes each new content to a
// temporary file, syncs all the temporary files at once, renames each into
// place, removes what is to be removed, and syncs the changed folders at
// once. A crash leaves each file as it was or as written, never half
// written, and temporary files that CleanTemps removes; once Commit
// returns, every operation that succeeded is durable.
type Batch struct {
	w   *Workspace
	ops []batchOp
	// StopOn, when set, stops the batch at an operation that fails with
	// an error it accepts (a full disk): the operations after it are not
	// carried out and fail with ErrNotDone, so that the batch's changes
	// are made in order up to the failure and none after it.
	StopOn func(error) bool
}

// ErrNotDone is the error of an operation a batch did not carry out,
// because an earlier one failed as StopOn says.
var ErrNotDone = errors.New("not done: an earlier change of the batch failed")

// BatchResult is what Commit did with one operation.
type BatchResult struct {
	// CreatedDirs lists the folders made for a write, outermost first.
	CreatedDirs []string
	Err         error
}

type opKind int

const (
	opWrite opKind = iota
	opRemove
	opKeep
)

type batchOp struct {
	kind  opKind
	path  string // as the caller gave it, for errors
	clean string
	data  []byte
	perm  fs.FileMode
	tmp   string
}

// NewBatch starts an empty batch.
func (w *Workspace) NewBatch() *Batch { return &Batch{w: w} }

// Write replaces or creates the file p. A zero perm keeps an existing
// file's permissions (0644 for a new file).
func (b *Batch) Write(p string, data []byte, perm fs.FileMode) {
	b.ops = append(b.ops, batchOp{kind: opWrite, path: p, data: data, perm: perm})
}

// Remove deletes the file p (never a folder; a symlink itself, not what it
// points to).
func (b *Batch) Remove(p string) { b.ops = append(b.ops, batchOp{kind: opRemove, path: p}) }

// Keep makes p durable as it is now, written or removed, with every folder
// above it (a crash may have come before their new entries were synced):
// for a change made before a crash, which must be on disk before it is
// recorded as done.
func (b *Batch) Keep(p string) { b.ops = append(b.ops, batchOp{kind: opKeep, path: p}) }

// Commit carries out the batch and returns one result per operation, in
// the order they were added. The batch is empty afterwards.
func (b *Batch) Commit() []BatchResult {
	res := make([]BatchResult, len(b.ops))
	var syncNames []string
	var syncOps []int
	dirs := map[string][]int{}
	var dirOrder []string
	addDir := func(d string, i int) {
		if _, ok := dirs[d]; !ok {
			dirOrder = append(dirOrder, d)
		}
		dirs[d] = append(dirs[d], i)
	}
	stamp := time.Now().UnixNano()
	for i := range b.ops {
		op := &b.ops[i]
		c, err := Clean(op.path)
		if err == nil && c == "." {
			err = errors.New("path names the workspace folder itself, not a file")
		}
		if err != nil {
			res[i].Err = err
			continue
		}
		op.clean = c
		switch op.kind {
		case opWrite:
			created, err := b.w.writeTempFor(op, fmt.Sprintf("%d-%d", stamp, i))
			res[i].CreatedDirs = created
			for _, d := range created {
				addDir(path.Dir(d), i)
			}
			if err != nil {
				res[i].Err = err
				continue
			}
			syncNames, syncOps = append(syncNames, op.tmp), append(syncOps, i)
		case opKeep:
			if info, err := b.w.root.Lstat(c); err == nil && info.Mode().IsRegular() {
				syncNames, syncOps = append(syncNames, c), append(syncOps, i)
			}
			for d := path.Dir(c); d != "."; d = path.Dir(d) {
				if _, err := b.w.root.Stat(d); err == nil {
					addDir(path.Dir(d), i)
				}
			}
		}
		addDir(path.Dir(c), i)
	}
	for j, err := range atomicfile.SyncAll(syncNames, b.w.root.Open) {
		if err != nil && res[syncOps[j]].Err == nil {
			res[syncOps[j]].Err = err
		}
	}
	stopped := false
	for i := range b.ops {
		op := &b.ops[i]
		if stopped && res[i].Err == nil {
			res[i].Err = ErrNotDone
		}
		if res[i].Err != nil {
			if op.tmp != "" {
				b.w.root.Remove(op.tmp)
			}
			stopped = stopped || (b.StopOn != nil && b.StopOn(res[i].Err))
			continue
		}
		switch op.kind {
		case opWrite:
			if err := b.w.root.Rename(op.tmp, op.clean); err != nil {
				b.w.root.Remove(op.tmp)
				res[i].Err = wrap(op.path, err)
			}
		case opRemove:
			res[i].Err = b.w.remove(op.path, op.clean)
		}
	}
	for j, err := range atomicfile.SyncAll(dirOrder, b.w.root.Open) {
		if err == nil {
			continue
		}
		for _, i := range dirs[dirOrder[j]] {
			if res[i].Err == nil {
				res[i].Err = err
			}
		}
	}
	b.ops = nil
	return res
}

// writeTempFor makes the folders a write needs and writes its temporary
// file, unsynced.
func (w *Workspace) writeTempFor(op *batchOp, unique string) ([]string, error) {
	perm := op.perm
	if info, err := w.root.Stat(op.clean); err == nil {
		if info.IsDir() {
			return nil, fmt.Errorf("'%s' is a folder, not a file", op.path)
		}
		if perm == 0 {
			perm = info.Mode().Perm()
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, wrap(op.path, err)
	}
	if perm == 0 {
		perm = 0o644
	}
	created, err := w.mkdirAll(op.path, op.clean)
	if err != nil {
		return created, err
	}
	tmp := path.Join(path.Dir(op.clean), tempStem(path.Base(op.clean))+unique)
	if err := w.writeTemp(op.path, tmp, op.data, perm); err != nil {
		return created, err
	}
	op.tmp = tmp
	return created, nil
}
