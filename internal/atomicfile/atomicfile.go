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

// TempPrefix starts the name of every temporary file courier writes, so
// that a crash leftover can be recognised, hidden and removed.
const TempPrefix = ".courier-tmp-"

// Write replaces path with data: it writes a temporary file in the same
// folder, syncs it, renames it over path and syncs the folder, so the rename
// itself survives a power cut. The temporary file never outlives the call.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = Sync(f); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
}

// SyncDir makes a rename or creation in dir durable.
func SyncDir(dir string) error {
	if !syncing {
		return nil
	}
	return syncOne(dir, os.Open)
}

// IsTemp reports whether a file name is one of Write's temporary files.
func IsTemp(name string) bool {
	return len(name) > len(TempPrefix) && name[:len(TempPrefix)] == TempPrefix
}

// CleanTemps removes temporary files a crash left in dir.
func CleanTemps(dir string) error { return CleanTempsFor(dir, "") }

// CleanTempsFor removes the temporary files a crash left in dir while
// writing files whose names start with base, leaving other writers'
// temporary files alone.
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

// syncWorkers is how many syncs SyncAll keeps in flight. A journaling
// filesystem commits the syncs that wait at the same moment together, so a
// few in flight cost little more than one; more only add threads.
const syncWorkers = 32

// SyncAll makes many files (or folders) durable at once: each name is
// opened with open, synced and closed, several at a time. It returns one
// error per name, nil where the sync succeeded.
func SyncAll(names []string, open func(string) (*os.File, error)) []error {
	errs := make([]error, len(names))
	if !syncing {
		return errs
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(syncWorkers, len(names)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = syncOne(names[i], open)
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

func syncOne(name string, open func(string) (*os.File, error)) error {
	f, err := open(name)
	if err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	defer f.Close()
	if err := Sync(f); err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	return nil
}
