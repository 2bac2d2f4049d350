package snapshot

import (
	"bytes"
	"fmt"
	"io"

	"github.com/courier-agent/courier/internal/human"

	"github.com/courier-agent/courier/internal/edit"
)

// maxDiffFile is the largest file whose content a diff shows; larger
// ones are summarised like binary files.
const maxDiffFile = 4 << 20

// CommandChanges is what one command of a turn changed.
type CommandChanges struct {
	// Index is the command's position in the reply (the key given to
	// After).
	Index int
	Changes
}

// TurnChanges lists a turn's changes command by command, for 'courier
// log'. Pruned is set when the turn's snapshot was dropped: the list
// stands, but the turn cannot be undone nor diffed any more.
type TurnChanges struct {
	Commands []CommandChanges
	Pruned   bool
}

// Changes returns what each command of turn seq changed.
func (s *Store) Changes(seq int) (TurnChanges, error) {
	steps, err := readSteps(s.turnPath(seq, "log"))
	if err != nil {
		return TurnChanges{}, err
	}
	tc := TurnChanges{Pruned: s.pruned(seq)}
	for i, st := range steps {
		if !st.base && len(st.changes) > 0 {
			tc.Commands = append(tc.Commands, CommandChanges{Index: st.key, Changes: Changes{List: st.changes, Skipped: st.skipped, Lost: lostIn(steps, i)}})
		}
	}
	return tc, nil
}

// Diff writes what turn seq changed as one unified diff for text files
// (each cut at maxBytes, 0 for no limit), with binary and large files,
// folders, symlinks, modes and paths left out of snapshots summarised on
// lines starting with "#".
func (s *Store) Diff(w io.Writer, seq int, maxBytes int) error {
	if s.pruned(seq) {
		return prunedError(seq)
	}
	steps, err := readSteps(s.turnPath(seq, "log"))
	if err != nil {
		return err
	}
	for _, p := range plan(steps) {
		if err := s.diffPath(w, p, maxBytes); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) diffPath(w io.Writer, p planned, maxBytes int) error {
	name := display(p.path)
	b, a := p.before, p.after
	c := Change{Path: p.path, Before: b, After: a}
	if p.ignored {
		_, err := fmt.Fprintf(w, "# %s: %s, left out of snapshots\n", name, c.Action())
		return err
	}
	if c.ModeChanged() {
		if _, err := fmt.Fprintf(w, "# %s: mode %04o → %04o\n", name, b.Mode, a.Mode); err != nil {
			return err
		}
	}
	bf, af := b != nil && b.Kind == File, a != nil && a.Kind == File
	if !bf && !af {
		return s.diffOther(w, name, &c)
	}
	if bf && af && c.sameContent() {
		return nil
	}
	old, oldOK := s.diffSide(b)
	cur, curOK := s.diffSide(a)
	switch {
	case !oldOK || !curOK:
		_, err := fmt.Fprintf(w, "# %s: %s (%s), content not kept\n", name, c.Action(), sizes(b, a))
		return err
	case isBinary(old) || isBinary(cur):
		_, err := fmt.Fprintf(w, "# %s: binary file %s (%s)\n", name, c.Action(), sizes(b, a))
		return err
	}
	if b != nil && a != nil && b.Kind != a.Kind {
		// A file that became or stopped being something else.
		if err := s.diffOther(w, name, &c); err != nil {
			return err
		}
	}
	d, _, _ := edit.Diff(name, string(old), string(cur), maxBytes)
	_, err := io.WriteString(w, d)
	return err
}

// diffSide returns a file's content for a diff: empty for a side that is
// not a file, ok false if the content is not kept or too large.
func (s *Store) diffSide(e *Entry) ([]byte, bool) {
	if e == nil || e.Kind != File {
		return nil, true
	}
	if !e.Stored() || e.Size > maxDiffFile {
		return nil, false
	}
	data, err := s.obj.read(e.Hash)
	return data, err == nil
}

// diffOther describes a change of a folder, symlink or special file.
func (s *Store) diffOther(w io.Writer, name string, c *Change) error {
	var text string
	switch b, a := c.Before, c.After; {
	case b == nil:
		text = "new " + a.Kind.String()
		if a.Kind == Symlink {
			text += " to " + display(a.Target)
		}
	case a == nil:
		text = b.Kind.String() + " deleted"
	case b.Kind != a.Kind:
		text = b.Kind.String() + " → " + a.Kind.String()
	case b.Kind == Symlink && b.Target != a.Target:
		text = "symlink to " + display(b.Target) + " → " + display(a.Target)
	default:
		return nil
	}
	_, err := fmt.Fprintf(w, "# %s: %s\n", name, text)
	return err
}

func sizes(b, a *Entry) string {
	switch {
	case b == nil || b.Kind != File:
		return human.Bytes(a.Size)
	case a == nil || a.Kind != File:
		return human.Bytes(b.Size)
	}
	return human.Bytes(b.Size) + " → " + human.Bytes(a.Size)
}

// isBinary looks for a NUL byte in the first 8000 bytes, as git does.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}
