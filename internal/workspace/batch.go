package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// Batch makes writes and removals durable together through temporary files
// synced at once, renamed, and their folders synced: a crash leaves each
// file old or new, and temporary files CleanTemps removes.
type Batch struct {
	w   *Workspace
	ops []batchOp
	// StopOn, when set, stops the batch at an error it accepts (a full
	// disk): the later operations fail with ErrNotDone.
	StopOn func(error) bool
}

// ErrNotDone is the error of an operation left undone after StopOn.
var ErrNotDone = errors.New("not done: an earlier change of the batch failed")

// BatchResult is what Commit did with one operation.
type BatchResult struct {
	CreatedDirs []string // made for a write, outermost first
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
	path  string // as given, for errors
	clean string
	data  string
	perm  fs.FileMode
	tmp   string
}

// NewBatch starts an empty batch.
func (w *Workspace) NewBatch() *Batch { return &Batch{w: w} }

// Write replaces or creates file p; a zero perm keeps its mode (new: 0644).
func (b *Batch) Write(p, data string, perm fs.FileMode) {
	b.ops = append(b.ops, batchOp{kind: opWrite, path: p, data: data, perm: perm})
}

// Remove deletes the file p (never a folder; a link itself).
func (b *Batch) Remove(p string) { b.ops = append(b.ops, batchOp{kind: opRemove, path: p}) }

// Keep makes p durable as it is, with every folder above it.
func (b *Batch) Keep(p string) { b.ops = append(b.ops, batchOp{kind: opKeep, path: p}) }

// Commit carries out and empties the batch, one result per operation.
func (b *Batch) Commit() []BatchResult {
	res := make([]BatchResult, len(b.ops))
	var syncNames, dirOrder []string
	var syncOps []int
	dirs := map[string][]int{}
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
		for _, i := range dirs[dirOrder[j]] {
			if err != nil && res[i].Err == nil {
				res[i].Err = err
			}
		}
	}
	b.ops = nil
	return res
}

// writeTempFor makes the folders a write needs and its temporary file.
func (w *Workspace) writeTempFor(op *batchOp, unique string) (created []string, err error) {
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
	if created, err = w.mkdirAll(op.path, op.clean); err != nil {
		return created, err
	}
	tmp := path.Join(path.Dir(op.clean), tempStem(path.Base(op.clean))+unique)
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return created, wrap(op.path, err)
	}
	_, err = f.WriteString(op.data)
	if err == nil {
		err = f.Chmod(perm) // past the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.root.Remove(tmp)
		return created, err
	}
	op.tmp = tmp
	return created, nil
}

// mkdirAll makes the missing folders above c and returns them.
func (w *Workspace) mkdirAll(p, c string) ([]string, error) {
	missing, notDir, err := w.missingDirs(p, c)
	if err != nil {
		return nil, err
	}
	if notDir != "" {
		return nil, fmt.Errorf("'%s' is a file, so it cannot hold '%s'", notDir, p)
	}
	for i, d := range missing {
		if err := w.root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return missing[:i], wrap(p, err)
		}
	}
	return missing, nil
}

// missingDirs lists the missing folders above c, outermost first, and the
// nearest existing one if it is not a folder.
func (w *Workspace) missingDirs(p, c string) (missing []string, notDir string, err error) {
	for d := path.Dir(c); d != "."; d = path.Dir(d) {
		info, err := w.root.Stat(d)
		if err == nil {
			if !info.IsDir() {
				notDir = d
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", wrap(p, err)
		}
		missing = append([]string{d}, missing...)
	}
	return missing, notDir, nil
}

func (w *Workspace) remove(p, c string) error {
	info, err := w.root.Lstat(c)
	if err != nil {
		return wrap(p, err)
	}
	if info.IsDir() {
		return fmt.Errorf("'%s' is a folder; only files can be deleted", p)
	}
	return wrap(p, w.root.Remove(c))
}
