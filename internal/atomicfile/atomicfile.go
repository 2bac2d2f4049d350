// Package atomicfile writes files so that a reader, or a courier restarted
// after a crash, sees either the old content or the new, never a mix.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// TempPrefix starts every temporary file courier writes, to know leftovers.
const TempPrefix = ".courier-tmp-"

// Write replaces path with data through a synced temporary file, renamed
// over path, and the folder synced, so the rename survives a power cut.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := Stage(path, data, perm)
	if err != nil {
		return err
	}
	return f.Commit()
}

// Stage is Write up to the commit (Commit, CommitInOrder or Abort).
func Stage(path string, data []byte, perm os.FileMode) (*File, error) {
	f, err := Create(path, perm)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return nil, err
	}
	return f, nil
}

// StageUnsynced is Stage, unsynced, for a file courier can write again
// (a request): after a power cut it may be damaged, and its reader checks.
func StageUnsynced(path string, data []byte, perm os.FileMode) (*File, error) {
	f, err := Stage(path, data, perm)
	if err == nil {
		f.unsynced = true
	}
	return f, err
}

// File is a file's new content, seen only after Commit; Commit or Abort end it.
type File struct {
	f        *os.File
	path     string
	perm     os.FileMode
	unsynced bool // see StageUnsynced
}

// Create starts the new content of path, in a temporary file beside it.
func Create(path string, perm os.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &File{f: f, path: path, perm: perm}, nil
}

// Write appends p to the new content.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.f.Write(p)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", f.path, err)
	}
	return n, nil
}

// Commit gives the file its mode, syncs it, renames it over its path and
// syncs the folder; on failure the old content, if any, stays.
func (f *File) Commit() error { return CommitInOrder(f) }

// CommitInOrder commits files, contents synced first, then renamed in
// order: a crash never leaves a later one without an earlier (synced) one.
func CommitInOrder(files ...*File) error {
	for _, f := range files {
		if err := f.seal(); err != nil {
			for _, f := range files {
				f.Abort()
			}
			return err
		}
	}
	for i, f := range files {
		if err := os.Rename(f.f.Name(), f.path); err != nil {
			for _, f := range files[i:] {
				f.Abort()
			}
			return fmt.Errorf("write %s: %w", f.path, err)
		}
		if f.unsynced {
			continue
		}
		if err := SyncDir(filepath.Dir(f.path)); err != nil {
			// The rename may not outlast a power cut: the rest wait.
			for _, f := range files[i+1:] {
				f.Abort()
			}
			return err
		}
	}
	return nil
}

func (f *File) seal() error {
	if err := f.f.Chmod(f.perm); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if !f.unsynced {
		if err := f.f.Sync(); err != nil {
			return fmt.Errorf("write %s: sync: %w", f.path, err)
		}
	}
	if err := f.f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Abort removes the temporary file; the old content, if any, stays.
func (f *File) Abort() {
	f.f.Close()
	os.Remove(f.f.Name())
}

// SyncDir makes a rename or creation in dir durable.
func SyncDir(dir string) error { return syncOne(dir, os.Open) }

// IsTemp reports whether a file name is one of Write's temporary files.
func IsTemp(name string) bool {
	return len(name) > len(TempPrefix) && strings.HasPrefix(name, TempPrefix)
}

// CleanTemps removes temporary files a crash left in dir.
func CleanTemps(dir string) error { return CleanTempsFor(dir, "") }

// CleanTempsFor removes the temporary files a crash left in dir writing
// files whose names start with base, leaving other writers' alone.
func CleanTempsFor(dir, base string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	for _, e := range entries {
		if IsTemp(e.Name()) && strings.HasPrefix(e.Name()[len(TempPrefix):], base) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("clean %s: %w", dir, err)
			}
		}
	}
	return nil
}

// syncWorkers is how many syncs SyncAll keeps in flight: a journaling
// file system commits the syncs waiting at once together.
const syncWorkers = 32

// SyncAll makes files or folders, opened with open, durable, an error each.
func SyncAll(names []string, open func(string) (*os.File, error)) []error {
	errs := make([]error, len(names))
	busy := make(chan struct{}, syncWorkers)
	var wg sync.WaitGroup
	for i, name := range names {
		busy <- struct{}{}
		wg.Go(func() {
			errs[i] = syncOne(name, open)
			<-busy
		})
	}
	wg.Wait()
	return errs
}

func syncOne(name string, open func(string) (*os.File, error)) error {
	f, err := open(name)
	if err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	return nil
}
