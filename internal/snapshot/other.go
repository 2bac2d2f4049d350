//go:build !linux

package snapshot

import "errors"

// Snapshots walk and restore the workspace through Linux's openat family
// with O_NOFOLLOW; elsewhere Open fails and callers keep to what they did
// before.

var errUnsupported = errors.New("workspace snapshots need Linux")

func openRoot(string) (int, error) { return -1, errUnsupported }

func closeFD(int) error { return nil }

func syncFS(...string) error { return errUnsupported }

type errNotDir struct{ path string }

func (e *errNotDir) Error() string { return e.path + " is not a folder" }

func (s *Store) scan([]Entry, bool, bool, *limits) (scanResult, error) {
	return scanResult{}, errUnsupported
}

func (t *Turn) refresh([]string) ([]Change, []Skipped, error) {
	return nil, nil, errUnsupported
}

func (s *Store) restore(int, []planned, *recordFile, map[string]Kept, *UndoReport) error {
	return errUnsupported
}
