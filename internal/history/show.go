package history

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/workspace"
)

// Changes is what one command changed in the workspace.
type Changes struct {
	List    []Change  // in walk order
	Skipped []Skipped // content not kept, so a later change is not undoable
	Lost    []Skipped // what of List undo cannot reverse (left-out paths aside), and why
}

// changesAt is what record recs[k] changed, with earlier records' reasons.
func changesAt(recs []Record, k int) Changes {
	var skipped []Skipped
	for _, r := range recs[:k] {
		skipped = append(skipped, r.Skipped...)
	}
	return Changes{List: recs[k].Changes, Skipped: recs[k].Skipped, Lost: lostOf(recs[k].Changes, reasons(skipped))}
}

func lostOf(list []Change, why map[string]string) (out []Skipped) {
	for _, c := range list {
		if !c.Ignored() && !c.Undoable() {
			out = append(out, Skipped{Path: c.Path, Reason: why[c.Path]})
		}
	}
	return out
}

// reasons maps each path to its reason, the last one given.
func reasons(list []Skipped) map[string]string {
	m := map[string]string{}
	for _, sk := range list {
		m[sk.Path] = sk.Reason
	}
	return m
}

// item is a path of a folded list, or a folder standing for those below it:
// counts by kind (an action, or "file" and "folder"), paths listed (itself
// included), lost (not undoable).
type item struct {
	path   string
	dir    bool
	text   string
	counts map[string]int
	paths  int
	lost   int
}

// fold folds more than n items into their folders, at the deepest level
// leaving at most n (else the first), and returns the texts of at most n,
// or of n-1 and the rest; describe says what a folder holds.
func fold(items []item, n int, describe func(item) string) (texts []string, rest []item) {
	n = max(n, 1)
	at := func(depth int) []item {
		var out []item
		index := map[string]int{}
		for _, it := range items {
			key := it.path
			if parts := strings.SplitN(key, "/", depth+1); len(parts) > depth {
				key = strings.Join(parts[:depth], "/")
			}
			if index[key] == 0 {
				out = append(out, item{path: key, counts: map[string]int{}})
				index[key] = len(out)
			}
			g := &out[index[key]-1]
			head := key == it.path && g.paths == 0
			if g.dir, g.text = true, ""; head {
				g.dir, g.text = it.dir, it.text
			}
			if !head || !it.dir { // a folder counts what is below it
				for a, c := range it.counts {
					g.counts[a] += c
				}
			}
			g.lost += it.lost
			g.paths += max(it.paths, 1)
		}
		return out
	}
	best := items
	if len(items) > n {
		best = at(1)
		for depth := 2; len(best) <= n; depth++ {
			g := at(depth)
			if len(g) > n || len(g) == len(best) {
				break
			}
			best = g
		}
	}
	if len(best) > n {
		best, rest = best[:n-1], best[n-1:]
	}
	for _, it := range best {
		texts = append(texts, cmp.Or(it.text, displayItem(it.path, true)+" ("+describe(it)+")"))
	}
	return texts, rest
}

// Summary writes the changes on one line for the LLM, at most n items, saying
// what undo cannot reverse, e.g. "changed: go.sum (edited), tmp/ (3 files deleted)".
func (cs Changes) Summary(n int) string {
	texts, rest := fold(cs.items(), n, func(it item) string {
		var parts []string
		for _, a := range []string{"created", "edited", "deleted", "type changed", "symlink changed", "mode changed"} {
			if c := it.counts[a]; c > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", c, strings.Replace(a, "created", "new", 1)))
			}
		}
		return cmp.Or(strings.Join(parts, ", "), "changed") + lostText(it.lost, ", %d of them not undoable")
	})
	more, moreLost := 0, 0
	for _, it := range rest {
		sum := 0
		for _, c := range it.counts {
			sum += c
		}
		more += max(sum, 1)
		moreLost += it.lost
	}
	switch {
	case len(rest) > 0 && len(texts) == 0:
		texts = []string{human.Count(more, "path", "")}
	case len(rest) > 0:
		texts = append(texts, fmt.Sprintf("and %d more", more))
	case len(texts) == 0:
		return ""
	}
	return "changed: " + strings.Join(texts, ", ") + lostText(moreLost, " (%d of them not undoable)")
}

func lostText(n int, format string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(format, n)
}

// items: a folder created or deleted with all in it is one.
func (cs Changes) items() []item {
	skipped, lost := reasons(cs.Skipped), reasons(cs.Lost)
	list := cs.List
	var out []item
	for i := 0; i < len(list); i++ {
		c := &list[i]
		a := c.Action()
		it := item{path: c.Path, dir: c.isDir(), counts: map[string]int{}}
		if !it.dir {
			it.counts[a] = 1
		}
		if !c.Undoable() {
			it.lost = 1
		}
		inside := map[bool]string{true: "created", false: "deleted"}[c.After != nil && c.After.Kind == Dir]
		text := changeText(c)
		switch why, later := skipped[c.Path]; {
		case c.Ignored():
			text = "ignored, not undoable"
		case it.dir && a != "mode changed": // a folder that came or went
			files, size, first := 0, int64(0), i+1
			for i+1 < len(list) && isBelow(list[i+1].Path, c.Path) && list[i+1].Action() == inside && !list[i+1].Ignored() {
				if i++; !list[i].isDir() {
					files++
					size += entryOf(&list[i]).Size
				}
			}
			it.lost += len(lostOf(list[first:i+1], nil))
			it.counts = map[string]int{inside: files}
			n := human.Count(files, "file", "")
			in := map[string]string{"created": "new, " + n + ", " + human.Bytes(size), "deleted": n + " deleted"}[inside]
			if files == 0 {
				in = map[string]string{"created": "new folder", "deleted": "folder deleted"}[inside]
			}
			if a != "type changed" {
				text = in
			} else if it.dir = false; files > 0 {
				text += ", " + in
			}
			text += lostText(it.lost, ", %d of them not undoable")
		case !c.Undoable():
			text += "; not undoable: " + cmp.Or(lost[c.Path], why, reasonNotStored)
		case later && c.After != nil:
			text += "; " + why + ", so a later change cannot be undone"
		}
		it.text = displayItem(c.Path, it.dir) + " (" + text + ")"
		out = append(out, it)
	}
	return out
}

func entryOf(c *Change) *Entry { return cmp.Or(c.After, c.Before) }

func changeText(c *Change) string {
	text := c.Action()
	switch {
	case text == "created" && c.After.Kind == File:
		text = "new, " + human.Bytes(c.After.Size)
	case text == "created" && c.After.Kind == Symlink:
		text = "new symlink to " + display(c.After.Target)
	case text == "created":
		text = "new " + c.After.Kind.String()
	case text == "type changed":
		text = c.Before.Kind.String() + " → " + c.After.Kind.String()
	case text == "symlink changed":
		text = "symlink now to " + display(c.After.Target)
	case text == "mode changed":
		text = ""
	}
	if c.modeChanged() {
		text = strings.TrimPrefix(text+fmt.Sprintf(", mode %04o → %04o", c.Before.Mode, c.After.Mode), ", ")
	}
	return text
}

func displayItem(p string, dir bool) string {
	if dir && p != "" {
		return display(p + "/")
	}
	return display(p)
}

// foldPaths lists paths in at most n lines: each while they fit, else folded
// into their folders, "gen/ (2,000 files)", and past even that "and N more".
func foldPaths(paths, folders []string, n int) []string {
	isDir := map[string]bool{}
	for _, f := range folders {
		isDir[f] = true
	}
	items := make([]item, len(paths))
	for i, p := range paths {
		kind := map[bool]string{true: "folder", false: "file"}[isDir[p]]
		items[i] = item{path: p, dir: isDir[p], text: displayItem(p, isDir[p]), counts: map[string]int{kind: 1}}
	}
	out, rest := fold(items, n, func(it item) string {
		var parts []string
		for _, kind := range []string{"file", "folder"} {
			if c := it.counts[kind]; c > 0 {
				parts = append(parts, human.Thousands(c)+" "+kind+map[bool]string{true: "", false: "s"}[c == 1])
			}
		}
		return strings.Join(parts, ", ")
	})
	more := 0
	for _, it := range rest {
		more += max(it.paths, 1)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %s more", human.Thousands(more)))
	}
	return out
}

// notUndoable lists, in walk order, what of a turn (recs, planned) undo
// cannot put back, and why.
func notUndoable(recs []Record, planned []Change) []Skipped {
	why, first := map[string]string{}, map[string]string{}
	for _, r := range recs {
		for _, c := range r.Changes {
			if _, ok := first[c.Path]; !ok && r.Index >= 0 {
				first[c.Path] = why[c.Path]
			}
		}
		maps.Copy(why, reasons(r.Skipped))
	}
	return lostOf(planned, first)
}

// partlyUndoable warns that lost, of turn seq, cannot be undone; "" if none.
func partlyUndoable(seq int, lost []Skipped) string {
	if len(lost) == 0 {
		return ""
	}
	var names []string
	for _, l := range lost[:min(len(lost), 5)] {
		names = append(names, fmt.Sprintf("%s (%s)", display(l.Path), cmp.Or(l.Reason, "not snapshotted")))
	}
	if len(lost) > 5 {
		names = append(names, fmt.Sprintf("and %d more", len(lost)-5))
	}
	return fmt.Sprintf("turn %d is only partly undoable: %s", seq, strings.Join(names, ", "))
}

// plan composes a turn's changes into one per path, before the first and
// after the last, in walk order, leaving out paths left as they were.
func plan(recs []Record) []Change {
	byPath, ignored := map[string]*Change{}, map[string]bool{}
	for _, r := range recs {
		if r.Kind != RecordChanged || r.Index < 0 {
			continue
		}
		for _, c := range r.Changes {
			p := byPath[c.Path]
			if p == nil {
				p = &Change{Path: c.Path, Before: c.Before}
				byPath[c.Path] = p
			}
			p.After = c.After
			ignored[c.Path] = ignored[c.Path] || c.Ignored()
		}
	}
	var out []Change
	for _, p := range byPath {
		c := *p
		if c.Before == nil && c.After == nil {
			continue // made and removed again
		}
		if ignored[c.Path] && !c.Ignored() {
			// Left out at some step: it stays reported as such.
			e := *entryOf(&c)
			e.Flags |= Ignored
			if c.After != nil {
				c.After = &e
			} else {
				c.Before = &e
			}
		}
		if c.Ignored() || c.Before == nil || c.After == nil || differ(c.Before, c.After) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Change) int { return cmpPath(a.Path, b.Path) })
	return out
}

// Diff writes what turn seq changed as a unified diff of text files (each
// cut at maxBytes, 0: no limit), the rest summarised on "#" lines.
func (h *History) Diff(w io.Writer, seq int, maxBytes int) error {
	t, err := h.store.ReadTurn(h.id, seq)
	if err != nil {
		return err
	}
	if t.Has(RecordPruned) {
		return fmt.Errorf("turn %d cannot be shown: %w", seq, ErrPruned)
	}
	var out strings.Builder
	for _, c := range plan(t.Records) {
		name, b, a := display(c.Path), c.Before, c.After
		if c.Ignored() {
			fmt.Fprintf(&out, "# %s: %s, left out of snapshots\n", name, c.Action())
			continue
		}
		if c.modeChanged() {
			fmt.Fprintf(&out, "# %s: mode %04o → %04o\n", name, b.Mode, a.Mode)
		}
		var diff string
		if bf, af := b != nil && b.Kind == File, a != nil && a.Kind == File; (bf || af) && !(bf && af && b.sameContent(a)) {
			data, sizes, kept, binary := [2]string{}, []string(nil), true, false
			for i, e := range []*Entry{b, a} {
				if e == nil || e.Kind != File {
					continue
				}
				sizes = append(sizes, human.Bytes(e.Size))
				if kept = kept && e.stored() && e.Size <= 4<<20; kept { // larger files are not diffed
					var err error
					data[i], err = h.obj.read(e.Hash)
					kept = err == nil
				}
				binary = binary || strings.IndexByte(data[i][:min(len(data[i]), 8000)], 0) >= 0
			}
			if !kept || binary {
				format := map[bool]string{false: "# %s: %s (%s), content not kept\n", true: "# %s: binary file %s (%s)\n"}[kept]
				fmt.Fprintf(&out, format, name, c.Action(), strings.Join(sizes, " → "))
				continue
			}
			diff, _, _ = edit.Diff(name, data[0], data[1], maxBytes)
		}
		switch {
		case b == nil && a.Kind != File, b != nil && a != nil && b.Kind != a.Kind:
			fmt.Fprintf(&out, "# %s: %s\n", name, changeText(&c))
		case a == nil && b.Kind != File:
			fmt.Fprintf(&out, "# %s: %s deleted\n", name, b.Kind)
		case b != nil && a != nil && b.Kind == Symlink && b.Target != a.Target:
			fmt.Fprintf(&out, "# %s: symlink to %s → %s\n", name, display(b.Target), display(a.Target))
		}
		out.WriteString(diff)
	}
	_, err = io.WriteString(w, out.String())
	return err
}

// TurnLog is one turn as 'courier log' shows it.
type TurnLog struct {
	Sequence  int       `json:"sequence"`
	Reply     string    `json:"reply"`
	AppliedAt time.Time `json:"appliedAt"`
	Commands  int       `json:"commands"`
	Failed    int       `json:"failed"`
	// Changes are the commands that changed the workspace; Results how
	// each command ended; Changed what the turn changed, each path once.
	Changes  []CommandLog     `json:"changes"`
	Undone   bool             `json:"undone"`
	Finished bool             `json:"finished"`
	Pruned   bool             `json:"pruned,omitempty"` // cannot be undone nor diffed
	Results  []command.Result `json:"results,omitempty"`
	Changed  string           `json:"changed,omitempty"`
}

// CommandLog is what command Index (from 1) changed: a file command's file,
// action and lines, or another's summary line.
type CommandLog struct {
	Index   int    `json:"index"`
	Path    string `json:"path,omitempty"`
	Action  string `json:"action,omitempty"`
	Added   int    `json:"added,omitempty"`
	Removed int    `json:"removed,omitempty"`
	Changed string `json:"changed,omitempty"`
}

// Log lists the turns of session st, oldest first.
func (s Store) Log(st *State) ([]TurnLog, error) {
	seqs, err := s.Turns(st.SessionID)
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
		var skipped []Skipped
		for k, r := range t.Records {
			if r.Kind == RecordApply || r.Kind == RecordResult && r.Result != nil {
				results[r.Index] = r.Result
			}
			if r.Kind == RecordResult && r.Result != nil && !r.Result.Success() {
				tl.Failed++
			}
			if r.Kind != RecordChanged || r.Index < 0 {
				continue
			}
			if skipped = append(skipped, r.Skipped...); len(r.Changes) == 0 {
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
		for i := range begin.Commands {
			if r := results[i]; r != nil {
				tl.Results = append(tl.Results, *r)
			}
		}
		planned := plan(t.Records)
		tl.Changed = Changes{List: planned, Skipped: skipped, Lost: notUndoable(t.Records, planned)}.Summary(10)
		out = append(out, tl)
	}
	return out, err
}
