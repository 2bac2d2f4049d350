package history

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/workspace"
)

// Changes is what one command changed in the workspace.
type Changes struct {
	// List holds the changed paths in walk order (a folder before what it
	// holds).
	List []Change
	// Skipped lists changed paths whose content could not be kept (past
	// the limit, unreadable): a later change to them is not undoable.
	Skipped []Skipped
	// Lost lists the changes of List undo cannot reverse because the
	// earlier content was never kept, with the reason when the turn
	// recorded one ("" otherwise). Paths left out of the history are not
	// in it: Change.Ignored tells them.
	Lost []Skipped
}

// changesAt returns what the changed record recs[k] holds, with the
// reasons the turn's earlier records give for what cannot be undone.
func changesAt(recs []Record, k int) Changes {
	why := map[string]string{}
	for _, r := range recs[:k] {
		for _, sk := range r.Skipped {
			why[sk.Path] = sk.Reason
		}
	}
	cs := Changes{List: recs[k].Changes, Skipped: recs[k].Skipped}
	for _, c := range cs.List {
		if !c.Ignored() && !c.Undoable() {
			cs.Lost = append(cs.Lost, Skipped{Path: c.Path, Reason: why[c.Path]})
		}
	}
	return cs
}

// item is one entry of a summary: a path, or a folder standing for the
// changes below it.
type item struct {
	path string
	dir  bool
	text string
	// counts are the files (not folders) behind the item, by action; lost
	// those undo cannot reverse.
	counts map[string]int
	lost   int
}

// deepest returns group(depth) at the deepest depth where it has at most
// n entries (depth 1 when even that has more).
func deepest[T any](group func(depth int) []T, n int) []T {
	best := group(1)
	for depth := 2; len(best) <= n; depth++ {
		g := group(depth)
		if len(g) > n || len(g) == len(best) {
			break
		}
		best = g
	}
	return best
}

// Summary writes the changes on one line for the LLM, at most max items
// (folders summarised when many files below them changed), e.g. "changed:
// build/app (new, 2.1 MB), go.sum (edited), tmp/ (3 files deleted)". What
// undo cannot reverse is said where it shows, in a folded folder and in
// the "and N more" too. It is "" when nothing changed.
func (cs Changes) Summary(n int) string {
	items := cs.items()
	if len(items) == 0 {
		return ""
	}
	n = max(n, 1)
	if len(items) > n {
		items = deepest(func(depth int) []item { return groupAt(items, depth) }, n)
	}
	var parts []string
	more, moreLost := 0, 0
	for i, it := range items {
		if i < n-1 || len(items) <= n {
			parts = append(parts, it.text)
			continue
		}
		for _, n := range it.counts {
			more += n
		}
		if len(it.counts) == 0 {
			more++
		}
		moreLost += it.lost
	}
	line := "changed: " + strings.Join(parts, ", ")
	switch {
	case more > 0 && len(parts) == 0:
		line += human.Count(more, "path", "")
	case more > 0:
		line += fmt.Sprintf(", and %d more", more)
	}
	if moreLost > 0 {
		line += fmt.Sprintf(" (%d of them not undoable)", moreLost)
	}
	return line
}

// items turns the changes into summary items: a folder created or
// deleted with everything in it is one item.
func (cs Changes) items() []item {
	skipped, lost := map[string]string{}, map[string]string{}
	for _, sk := range cs.Skipped {
		skipped[sk.Path] = sk.Reason
	}
	for _, l := range cs.Lost {
		lost[l.Path] = l.Reason
	}
	list := cs.List
	var out []item
	for i := 0; i < len(list); i++ {
		c := &list[i]
		it := item{path: c.Path, dir: c.isDir(), counts: map[string]int{}}
		a := c.Action()
		if c.Ignored() {
			it.text = displayItem(c.Path, it.dir) + " (ignored, not undoable)"
			it.counts[a], it.lost = 1, 1
			out = append(out, it)
			continue
		}
		// A folder that appeared or went away, everything in it with it.
		inside := ""
		switch {
		case c.After != nil && c.After.Kind == Dir && (a == "created" || a == "type changed"):
			inside = "created"
		case c.Before != nil && c.Before.Kind == Dir && (a == "deleted" || a == "type changed"):
			inside = "deleted"
		}
		if inside == "" {
			if !it.dir {
				it.counts[a]++
			}
			text := changeText(c)
			why, notNow := skipped[c.Path]
			notNow = notNow && c.After != nil
			switch earlier := lost[c.Path]; {
			case !c.Undoable() && earlier != "":
				text += "; not undoable: " + earlier
			case !c.Undoable() && notNow:
				text += "; not undoable: " + why
			case !c.Undoable():
				text += "; not undoable: " + reasonNotStored
			case notNow:
				text += "; " + why + ", so a later change cannot be undone"
			}
			if !c.Undoable() {
				it.lost++
			}
			it.text = displayItem(c.Path, it.dir) + " (" + text + ")"
			out = append(out, it)
			continue
		}
		files, size := 0, int64(0)
		j := i + 1
		for ; j < len(list) && isBelow(list[j].Path, c.Path) && list[j].Action() == inside && !list[j].Ignored(); j++ {
			if !list[j].isDir() {
				files++
				size += entryOf(&list[j]).Size
			}
			if !list[j].Undoable() {
				it.lost++
			}
		}
		i = j - 1
		it.counts[inside] = files
		text := folderText(inside, files, size)
		if a == "type changed" {
			it.dir = false
			if text = changeText(c); files > 0 {
				text += ", " + folderText(inside, files, size)
			}
		}
		if !c.Undoable() {
			it.lost++
		}
		if it.lost > 0 {
			text += fmt.Sprintf(", %d of them not undoable", it.lost)
		}
		it.text = displayItem(c.Path, it.dir) + " (" + text + ")"
		out = append(out, it)
	}
	return out
}

// entryOf returns the state a change is about: after, or before for a
// deletion.
func entryOf(c *Change) *Entry {
	if c.After != nil {
		return c.After
	}
	return c.Before
}

// folderText says what happened inside a folder that appeared or went
// away.
func folderText(a string, files int, size int64) string {
	switch {
	case a == "created" && files == 0:
		return "new folder"
	case a == "created":
		return fmt.Sprintf("new, %s, %s", human.Count(files, "file", ""), human.Bytes(size))
	case files == 0:
		return "folder deleted"
	}
	return human.Count(files, "file", "") + " deleted"
}

// changeText says what happened to one path.
func changeText(c *Change) string {
	var parts []string
	switch c.Action() {
	case "created":
		switch c.After.Kind {
		case File:
			parts = append(parts, "new, "+human.Bytes(c.After.Size))
		case Symlink:
			parts = append(parts, "new symlink to "+display(c.After.Target))
		default:
			parts = append(parts, "new "+c.After.Kind.String())
		}
	case "deleted":
		parts = append(parts, "deleted")
	case "type changed":
		parts = append(parts, c.Before.Kind.String()+" → "+c.After.Kind.String())
	case "symlink changed":
		parts = append(parts, "symlink now to "+display(c.After.Target))
	case "edited":
		parts = append(parts, "edited")
	}
	if c.modeChanged() {
		parts = append(parts, fmt.Sprintf("mode %04o → %04o", c.Before.Mode, c.After.Mode))
	}
	return strings.Join(parts, ", ")
}

// groupAt keeps items less than depth folders deep and folds the others
// into their folder at that depth.
func groupAt(items []item, depth int) []item {
	var out []item
	index := map[string]int{}
	for _, it := range items {
		parts := strings.Split(it.path, "/")
		if len(parts) <= depth {
			out = append(out, it)
			continue
		}
		dir := strings.Join(parts[:depth], "/")
		i, ok := index[dir]
		if !ok {
			i = len(out)
			index[dir] = i
			out = append(out, item{path: dir, dir: true, counts: map[string]int{}})
		}
		for a, n := range it.counts {
			out[i].counts[a] += n
		}
		out[i].lost += it.lost
	}
	for i := range out {
		if out[i].text != "" {
			continue
		}
		var parts []string
		for _, a := range []string{"created", "edited", "deleted", "type changed", "symlink changed", "mode changed"} {
			if n := out[i].counts[a]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, strings.Replace(a, "created", "new", 1)))
			}
		}
		text := strings.Join(parts, ", ")
		if text == "" {
			text = "changed"
		}
		if out[i].lost > 0 {
			text += fmt.Sprintf(", %d of them not undoable", out[i].lost)
		}
		out[i].text = displayItem(out[i].path, true) + " (" + text + ")"
	}
	return out
}

func displayItem(p string, dir bool) string {
	if dir && p != "" {
		return display(p + "/")
	}
	return display(p)
}

// FoldPaths lists paths for a person or the LLM in at most max lines:
// each path while they fit; else, folded into the folders holding them at
// the deepest level that fits, "gen/ (2,000 files)"; past even that, the
// last line says "and N more". isDir tells which of the paths are folders
// (shown with a trailing "/").
func FoldPaths(paths []string, isDir func(string) bool, n int) []string {
	n = max(n, 1)
	if len(paths) <= n {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = displayItem(p, isDir(p))
		}
		return out
	}
	type folded struct {
		path           string
		files, folders int
		paths          int // the listed paths it stands for, itself included
	}
	best := deepest(func(depth int) []folded {
		var out []folded
		index := map[string]int{}
		for _, p := range paths {
			key, below := p, false
			if parts := strings.SplitN(p, "/", depth+1); len(parts) > depth {
				key, below = strings.Join(parts[:depth], "/"), true
			}
			i, ok := index[key]
			if !ok {
				i = len(out)
				index[key] = i
				out = append(out, folded{path: key})
			}
			out[i].paths++
			switch {
			case !below:
			case isDir(p):
				out[i].folders++
			default:
				out[i].files++
			}
		}
		return out
	}, n)
	var out []string
	for i, f := range best {
		if i == n-1 && len(best) > n {
			more := 0
			for _, rest := range best[i:] {
				more += rest.paths
			}
			return append(out, fmt.Sprintf("and %s more", human.Thousands(more)))
		}
		if f.files+f.folders == 0 {
			out = append(out, displayItem(f.path, isDir(f.path)))
			continue
		}
		var parts []string
		if f.files > 0 {
			parts = append(parts, human.Thousands(f.files)+" "+plural(f.files, "file"))
		}
		if f.folders > 0 {
			parts = append(parts, human.Thousands(f.folders)+" "+plural(f.folders, "folder"))
		}
		out = append(out, displayItem(f.path, true)+" ("+strings.Join(parts, ", ")+")")
	}
	return out
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// notUndoable lists, in walk order, the paths a turn's commands changed
// that its undo cannot put back, paths left out of the history aside,
// with the reason their content before the turn was not kept ("" when
// the turn did not record one).
func notUndoable(recs []Record) []Skipped {
	why, first := map[string]string{}, map[string]string{}
	for _, r := range recs {
		for _, c := range r.Changes {
			if _, ok := first[c.Path]; !ok && r.Index >= 0 {
				first[c.Path] = why[c.Path]
			}
		}
		for _, sk := range r.Skipped {
			why[sk.Path] = sk.Reason
		}
	}
	var out []Skipped
	for _, c := range plan(recs) {
		if !c.Ignored() && !c.Undoable() {
			out = append(out, Skipped{Path: c.Path, Reason: first[c.Path]})
		}
	}
	return out
}

// partlyUndoable is the warning for the person about turn seq, of which
// lost cannot be undone: "turn 3 is only partly undoable: big.txt (past
// the turn's snapshot limit of 1 GB)"; "" when nothing is lost.
func partlyUndoable(seq int, lost []Skipped) string {
	if len(lost) == 0 {
		return ""
	}
	var names []string
	for i, l := range lost {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(lost)-5))
			break
		}
		if l.Reason == "" {
			l.Reason = "not snapshotted"
		}
		names = append(names, fmt.Sprintf("%s (%s)", display(l.Path), l.Reason))
	}
	return fmt.Sprintf("turn %d is only partly undoable: %s", seq, strings.Join(names, ", "))
}

// plan composes a turn's recorded changes into one change per path: its
// state before the turn's first change of it and after the last, in walk
// order. Paths the turn left as they were are left out.
func plan(recs []Record) []Change {
	byPath := map[string]*Change{}
	var order []string
	ignored := map[string]bool{}
	for _, r := range recs {
		if r.Kind != RecordChanged || r.Index < 0 {
			continue
		}
		for _, c := range r.Changes {
			p, ok := byPath[c.Path]
			if !ok {
				p = &Change{Path: c.Path, Before: c.Before}
				byPath[c.Path] = p
				order = append(order, c.Path)
			}
			p.After = c.After
			ignored[c.Path] = ignored[c.Path] || c.Ignored()
		}
	}
	var out []Change
	for _, path := range order {
		c := byPath[path]
		if ignored[path] && !c.Ignored() {
			// Left out at some step: it stays reported as such.
			e := *entryOf(c)
			e.Flags |= Ignored
			if c.After != nil {
				c.After = &e
			} else {
				c.Before = &e
			}
		}
		if (c.Before == nil && c.After == nil) || (c.Before != nil && c.After != nil && !c.Ignored() && !differ(c.Before, c.After)) {
			continue
		}
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return cmpPath(out[i].Path, out[j].Path) < 0 })
	return out
}

// maxDiffFile is the largest file whose content a diff shows; larger
// ones are summarised like binary files.
const maxDiffFile = 4 << 20

// Diff writes what turn seq changed as one unified diff for text files
// (each cut at maxBytes, 0 for no limit), with binary and large files,
// folders, symlinks, modes and paths left out of the history summarised
// on lines starting with "#".
func (h *History) Diff(w io.Writer, seq int, maxBytes int) error {
	t, err := h.store.ReadTurn(h.id, seq)
	if err != nil {
		return err
	}
	if t.Has(RecordPruned) {
		return fmt.Errorf("turn %d cannot be shown: %w", seq, ErrPruned)
	}
	for _, c := range plan(t.Records) {
		if err := h.diffPath(w, &c, maxBytes); err != nil {
			return err
		}
	}
	return nil
}

func (h *History) diffPath(w io.Writer, c *Change, maxBytes int) error {
	name := display(c.Path)
	b, a := c.Before, c.After
	if c.Ignored() {
		_, err := fmt.Fprintf(w, "# %s: %s, left out of snapshots\n", name, c.Action())
		return err
	}
	if c.modeChanged() {
		if _, err := fmt.Fprintf(w, "# %s: mode %04o → %04o\n", name, b.Mode, a.Mode); err != nil {
			return err
		}
	}
	bf, af := b != nil && b.Kind == File, a != nil && a.Kind == File
	if !bf && !af || bf && af && b.sameContent(a) {
		return diffOther(w, name, c)
	}
	old, oldOK := h.diffSide(b)
	cur, curOK := h.diffSide(a)
	isBinary := func(data []byte) bool { return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 }
	switch {
	case !oldOK || !curOK:
		_, err := fmt.Fprintf(w, "# %s: %s (%s), content not kept\n", name, c.Action(), sizes(b, a))
		return err
	case isBinary(old) || isBinary(cur):
		_, err := fmt.Fprintf(w, "# %s: binary file %s (%s)\n", name, c.Action(), sizes(b, a))
		return err
	}
	if err := diffOther(w, name, c); err != nil {
		return err
	}
	d, _, _ := edit.Diff(name, string(old), string(cur), maxBytes)
	_, err := io.WriteString(w, d)
	return err
}

// diffSide returns a file's content for a diff: empty for a side that is
// not a file, ok false if the content is not kept or too large.
func (h *History) diffSide(e *Entry) ([]byte, bool) {
	if e == nil || e.Kind != File {
		return nil, true
	}
	if !e.stored() || e.Size > maxDiffFile {
		return nil, false
	}
	data, err := h.obj.read(e.Hash)
	return data, err == nil
}

// diffOther describes a change of a folder, symlink or special file, or
// of a path that became or stopped being one.
func diffOther(w io.Writer, name string, c *Change) error {
	var text string
	switch b, a := c.Before, c.After; {
	case b == nil && a.Kind != File:
		text = "new " + a.Kind.String()
		if a.Kind == Symlink {
			text += " to " + display(a.Target)
		}
	case a == nil && b.Kind != File:
		text = b.Kind.String() + " deleted"
	case b != nil && a != nil && b.Kind != a.Kind:
		text = b.Kind.String() + " → " + a.Kind.String()
	case b != nil && a != nil && b.Kind == Symlink && b.Target != a.Target:
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

// TurnLog is one turn as 'courier log' shows it.
type TurnLog struct {
	Sequence  int       `json:"sequence"`
	Reply     string    `json:"reply"`
	AppliedAt time.Time `json:"appliedAt"`
	Commands  int       `json:"commands"`
	Failed    int       `json:"failed"`
	// Changes lists the commands that changed the workspace.
	Changes  []CommandLog `json:"changes"`
	Undone   bool         `json:"undone"`
	Finished bool         `json:"finished"`
	// Pruned is set when the turn's contents were dropped: it can no
	// longer be undone nor diffed.
	Pruned bool `json:"pruned,omitempty"`
}

// CommandLog is what one command of a turn changed.
type CommandLog struct {
	// Index counts the reply's commands from 1.
	Index int `json:"index"`
	// A file command's file, what it did to it, and its lines added and
	// removed.
	Path    string `json:"path,omitempty"`
	Action  string `json:"action,omitempty"`
	Added   int    `json:"added,omitempty"`
	Removed int    `json:"removed,omitempty"`
	// Changed says on one line what another command changed.
	Changed string `json:"changed,omitempty"`
}

// Log lists the turns of session st, oldest first.
func (s Store) Log(st *State) ([]TurnLog, error) {
	seqs, err := s.Turns(st.SessionID)
	if err != nil {
		return nil, err
	}
	var out []TurnLog
	for _, seq := range seqs {
		t, err := s.ReadTurn(st.SessionID, seq)
		if err != nil {
			continue
		}
		begin, ok := t.Begun()
		if !ok {
			continue
		}
		tl := TurnLog{Sequence: seq, Reply: begin.ReplyFile, AppliedAt: begin.At, Commands: len(begin.Commands),
			Undone: t.Has(RecordUndone), Pruned: t.Has(RecordPruned), Finished: seq < st.SequenceNumber || st.IsComplete}
		results := map[int]*command.Result{}
		for k, r := range t.Records {
			switch {
			case r.Kind == RecordApply || r.Kind == RecordResult && r.Result != nil:
				results[r.Index] = r.Result
			}
			if r.Kind == RecordResult && r.Result != nil && !r.Result.Success() {
				tl.Failed++
			}
			if r.Kind != RecordChanged || r.Index < 0 || len(r.Changes) == 0 {
				continue
			}
			cl := CommandLog{Index: r.Index + 1, Changed: changesAt(t.Records, k).Summary(10)}
			if c := begin.Commands[min(r.Index, len(begin.Commands)-1)]; c.ChangesFiles() {
				clean, _ := workspace.Clean(c.Path)
				i := slices.IndexFunc(r.Changes, func(ch Change) bool { return ch.Path == clean })
				if res := results[r.Index]; i >= 0 && res != nil {
					cl = CommandLog{Index: r.Index + 1, Path: r.Changes[i].Path, Action: r.Changes[i].Action(), Added: res.Added, Removed: res.Removed}
				}
			}
			tl.Changes = append(tl.Changes, cl)
		}
		out = append(out, tl)
	}
	return out, nil
}
