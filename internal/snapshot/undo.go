package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// UndoReport says what undoing a turn did.
type UndoReport struct {
	Turn int
	// Restored lists the paths put back as they were before the turn.
	Restored []string
	// Removed lists the paths the turn created, now removed.
	Removed []string
	// Kept lists the paths whose content had changed since the turn:
	// that later content was set aside before the path was restored.
	Kept []Kept
	// NotUndone lists what undo could not put back, and why.
	NotUndone []Skipped
	// Folders lists which of Restored and Removed are folders, so that
	// long lists can be shown folder by folder.
	Folders []string
}

// Kept is later work set aside by an undo.
type Kept struct {
	Path string
	// SavedAs is the file holding the content that was set aside, or ""
	// for a symlink (Target says where it pointed).
	SavedAs string
	Target  string
}

// Records of an undo file.
const (
	undoBegin = 'b'
	undoKept  = 'k'
	undoDone  = 'd'
)

// planned is one path of an undo: its state before the turn (nil: it
// did not exist) and the state the turn left it in.
type planned struct {
	path          string
	before, after *Entry
	ignored       bool
}

// plan composes a turn's command steps into one change per path: its
// state before the turn's first change to it and after the last.
func plan(steps []step) []planned {
	byPath := map[string]*planned{}
	var order []*planned
	for _, st := range steps {
		if st.base {
			continue
		}
		for i := range st.changes {
			c := &st.changes[i]
			p, ok := byPath[c.Path]
			if !ok {
				p = &planned{path: c.Path, before: c.Before}
				byPath[c.Path] = p
				order = append(order, p)
			}
			p.after = c.After
			p.ignored = p.ignored || c.Ignored()
		}
	}
	out := make([]planned, 0, len(order))
	for _, p := range order {
		if p.before == nil && p.after == nil {
			continue
		}
		if p.before != nil && p.after != nil && !p.ignored && p.before.sameState(p.after) {
			continue
		}
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return cmpPath(out[i].path, out[j].path) < 0 })
	return out
}

// Undo puts the workspace back as it was before turn seq, for every path
// the turn's commands changed, and returns what it did. It is safe to
// run again after a crash at any point: the undo is begun in the turn's
// undo file, each step leaves a path as it was before the turn or skips
// it if it already is, content found changed since the turn is set aside
// (and recorded) before the path is touched, and a done record ends it;
// run again after that, Undo returns the saved report without touching
// anything. keeps, if not nil, tells the commands whose earlier content
// the caller keeps itself (see Turn.NotUndoable): a path one of them
// changed first, which the snapshot could not store, is left to the
// caller and not reported as not undone.
func (s *Store) Undo(seq int, keeps func(key int) bool) (UndoReport, error) {
	rep := UndoReport{Turn: seq}
	if err := s.tidy(); err != nil {
		return rep, err
	}
	if s.pruned(seq) {
		return rep, prunedError(seq)
	}
	steps, err := readSteps(s.turnPath(seq, "log"))
	if err != nil {
		return rep, err
	}
	if len(steps) == 0 {
		return rep, fmt.Errorf("turn %d has no snapshot: %w", seq, ErrNoSnapshot)
	}
	log, payloads, err := openRecords(s.turnPath(seq, "undo"))
	if err != nil {
		return rep, err
	}
	defer log.close()
	kept := map[string]Kept{}
	for _, p := range payloads {
		d := decoder{buf: p[1:]}
		switch p[0] {
		case undoDone:
			done := decodeReport(&d)
			done.Turn = seq
			return done, d.err
		case undoKept:
			k := Kept{Path: d.string(), SavedAs: d.string(), Target: d.string()}
			kept[k.Path] = k
		}
	}
	if len(payloads) > 0 {
		// An undo resumed after a crash: a copy being set aside may have
		// been cut short.
		if err := s.cleanKeptTemps(seq); err != nil {
			return rep, err
		}
	}
	if len(payloads) == 0 {
		// The marker lets the next run find this undo without reading
		// every turn's undo file.
		if err := atomicfile.Write(s.undoMarker(), []byte(strconv.Itoa(seq)), 0o644); err != nil {
			return rep, err
		}
		if err := log.append([]byte{undoBegin}, true); err != nil {
			return rep, err
		}
	}
	if err := s.restore(seq, plan(steps), log, kept, &rep); err != nil {
		return rep, err
	}
	leaveToKeeper(&rep, keptElsewhere(steps, keeps))
	explainNotUndone(&rep, steps)
	for _, k := range kept {
		rep.Kept = append(rep.Kept, k)
	}
	sort.Slice(rep.Kept, func(i, j int) bool { return cmpPath(rep.Kept[i].Path, rep.Kept[j].Path) < 0 })
	// What undo wrote must be on disk before the done record says so.
	if err := syncFS(s.dir, s.ws.Dir()); err != nil {
		return rep, err
	}
	if err := log.append(append([]byte{undoDone}, encodeReport(rep)...), true); err != nil {
		return rep, err
	}
	os.Remove(s.undoMarker())
	return rep, nil
}

func (s *Store) undoMarker() string { return filepath.Join(s.dir, "undoing") }

// UnfinishedUndo returns the turn whose undo was begun but not finished,
// if any: the runner finishes it (Undo again) before anything else.
func (s *Store) UnfinishedUndo() (int, bool, error) {
	data, err := os.ReadFile(s.undoMarker())
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("snapshot: %w", err)
	}
	seq, err := strconv.Atoi(string(data))
	if err != nil {
		return 0, false, fmt.Errorf("snapshot: damaged undo marker %s", s.undoMarker())
	}
	if s.undoUnfinished(seq) {
		return seq, true, nil
	}
	// The undo finished but courier stopped before removing the marker.
	os.Remove(s.undoMarker())
	return 0, false, nil
}

// undoUnfinished reports an undo that was begun (its begin record is
// written before anything is touched) and has no done record.
func (s *Store) undoUnfinished(seq int) bool {
	payloads, _, err := readRecords(s.turnPath(seq, "undo"))
	if err != nil {
		return true
	}
	return len(payloads) > 0 && payloads[len(payloads)-1][0] != undoDone
}

func encodeReport(r UndoReport) []byte {
	var buf []byte
	for _, list := range [][]string{r.Restored, r.Removed} {
		buf = binary.AppendUvarint(buf, uint64(len(list)))
		for _, p := range list {
			buf = appendString(buf, p)
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(r.Kept)))
	for _, k := range r.Kept {
		buf = appendString(appendString(appendString(buf, k.Path), k.SavedAs), k.Target)
	}
	buf = binary.AppendUvarint(buf, uint64(len(r.NotUndone)))
	for _, n := range r.NotUndone {
		buf = appendString(appendString(buf, n.Path), n.Reason)
	}
	buf = binary.AppendUvarint(buf, uint64(len(r.Folders)))
	for _, p := range r.Folders {
		buf = appendString(buf, p)
	}
	return buf
}

func decodeReport(d *decoder) UndoReport {
	var r UndoReport
	for _, list := range []*[]string{&r.Restored, &r.Removed} {
		for n := d.uvarint(); n > 0 && d.err == nil; n-- {
			*list = append(*list, d.string())
		}
	}
	for n := d.uvarint(); n > 0 && d.err == nil; n-- {
		r.Kept = append(r.Kept, Kept{Path: d.string(), SavedAs: d.string(), Target: d.string()})
	}
	for n := d.uvarint(); n > 0 && d.err == nil; n-- {
		r.NotUndone = append(r.NotUndone, Skipped{Path: d.string(), Reason: d.string()})
	}
	// Reports written before folders were told apart end here.
	if len(d.buf) > 0 {
		for n := d.uvarint(); n > 0 && d.err == nil; n-- {
			r.Folders = append(r.Folders, d.string())
		}
	}
	return r
}

// Summary writes the report on one line for the LLM and the person, at
// most max paths per list.
func (r UndoReport) Summary(max int) string {
	var parts []string
	list := func(label string, items []string) {
		if len(items) == 0 {
			return
		}
		if len(items) > max {
			items = append(items[:max:max], fmt.Sprintf("and %d more", len(items)-max))
		}
		parts = append(parts, label+": "+strings.Join(items, ", "))
	}
	paths := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = display(p)
		}
		return out
	}
	list("restored", paths(r.Restored))
	list("removed", paths(r.Removed))
	var kept []string
	for _, k := range r.Kept {
		if k.SavedAs != "" {
			kept = append(kept, fmt.Sprintf("%s (its later content is saved in %s)", display(k.Path), display(k.SavedAs)))
		} else {
			kept = append(kept, fmt.Sprintf("%s (was a symlink to %s)", display(k.Path), display(k.Target)))
		}
	}
	list("set aside", kept)
	var not []string
	for _, n := range r.NotUndone {
		not = append(not, fmt.Sprintf("%s (%s)", display(n.Path), n.Reason))
	}
	list("not undone", not)
	if len(parts) == 0 {
		return "nothing to undo"
	}
	return strings.Join(parts, "; ")
}

// cleanKeptTemps removes the temporary files a crash left under the folder
// where the undo of turn seq sets later work aside.
func (s *Store) cleanKeptTemps(seq int) error {
	root := filepath.Join(s.dir, "kept", fmt.Sprintf("%04d", seq))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return atomicfile.CleanTempsFor(p, "kept-")
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
