package session

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// UndoTop returns the turn 'courier undo' reverts next, 0 when there is
// none. A session written before courier kept it has it found once, by
// reading its turns, and carries it from then on.
func (s Store) UndoTop(st *State) (int, error) {
	if st.Format >= CurrentFormat {
		return st.UndoTop, nil
	}
	top, err := s.undoableBefore(st.SessionID, committedThrough(st)+1)
	if err != nil {
		return 0, err
	}
	st.UndoTop, st.Format = top, CurrentFormat
	return top, nil
}

// UndoBelow returns the turn undo reverts after t: the one its begin record
// names, or for a turn written before courier kept that, the newest
// earlier turn with file changes not undone.
func (s Store) UndoBelow(id string, t *Turn) (int, error) {
	if b, ok := t.Begun(); ok && b.UndoPrev != nil {
		return *b.UndoPrev, nil
	}
	return s.undoableBefore(id, t.Sequence)
}

// undoableBefore finds the newest turn before seq with file changes that
// was not undone, reading the turns from the newest down.
func (s Store) undoableBefore(id string, seq int) (int, error) {
	seqs, err := s.Turns(id)
	if err != nil {
		return 0, err
	}
	for i := len(seqs) - 1; i >= 0; i-- {
		if seqs[i] >= seq {
			continue
		}
		t, err := s.ReadTurn(id, seqs[i])
		if err != nil || t.IsUndone() || len(t.Changes()) == 0 {
			continue
		}
		return seqs[i], nil
	}
	return 0, nil
}

// keptName is the folder of a turn where undo keeps files that had changed
// since the turn, at their workspace paths.
const keptName = "kept"

// Keep saves, durably, the content of a workspace file that undo found
// changed since the turn, before undo replaces it, and returns where it
// went.
func (t *Turn) Keep(p string, data []byte) (string, error) {
	rel := filepath.FromSlash(p)
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("keep %q: not a path inside the workspace", p)
	}
	dst := filepath.Join(t.Dir, keptName, rel)
	made, err := mkdirs(filepath.Dir(dst))
	if err != nil {
		return "", fmt.Errorf("keep %s: %w", p, err)
	}
	for _, d := range made {
		if err := atomicfile.SyncDir(d); err != nil {
			return "", err
		}
	}
	if err := atomicfile.Write(dst, data, 0o644); err != nil {
		return "", fmt.Errorf("keep %s: %w", p, err)
	}
	return dst, nil
}

// cleanKept removes what a crash left while undo kept a file of the turn
// in dir.
func cleanKept(dir string) error {
	root := filepath.Join(dir, keptName)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if !d.IsDir() && atomicfile.IsTemp(d.Name()) {
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clean %s: %w", root, err)
	}
	return nil
}

// Kept lists the files undo kept for the turn, by workspace path.
func (t *Turn) Kept() (map[string]string, error) {
	root := filepath.Join(t.Dir, keptName)
	kept := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if d.Type().IsRegular() && !atomicfile.IsTemp(d.Name()) {
			rel, _ := filepath.Rel(root, p)
			kept[filepath.ToSlash(rel)] = p
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kept files of turn %d: %w", t.Sequence, err)
	}
	return kept, nil
}
