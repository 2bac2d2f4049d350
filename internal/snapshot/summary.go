package snapshot

import (
	"fmt"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// Changes is what one command changed in the workspace.
type Changes struct {
	// List holds the changed paths in walk order (a folder before what
	// it holds).
	List []Change
	// Skipped lists changed paths whose content could not be snapshotted
	// (over the limit, unreadable): a later change to them is not
	// undoable.
	Skipped []Skipped
	// Lost lists the changes of List that undo cannot reverse because
	// the earlier content was never snapshotted, with the reason when the
	// turn recorded one ("" otherwise). Paths left out of snapshots are
	// not in it: Change.Ignored tells them.
	Lost []Skipped
}

// Partial reports whether undo cannot reverse all of the changes.
func (cs Changes) Partial() bool {
	for i := range cs.List {
		if !cs.List[i].Undoable() {
			return true
		}
	}
	return false
}

// item is one entry of a summary: a path, or a folder standing for the
// changes inside it.
type item struct {
	path string
	dir  bool
	text string
	// counts of the files (not folders) behind the item, per action.
	counts map[Action]int
	// lost counts the changes behind the item undo cannot reverse.
	lost int
}

// Summary writes the changes on one line for the LLM, at most max items
// (folders summarised when many files under them changed), e.g.
// "changed: build/app (new, 2.1 MB), go.sum (edited), tmp/ (3 files
// deleted)". What undo cannot reverse is said where it shows, in a folded
// folder and in the "and N more" too. It is "" when nothing changed.
func (cs Changes) Summary(max int) string {
	skipped := map[string]string{}
	for _, sk := range cs.Skipped {
		skipped[sk.Path] = sk.Reason
	}
	lost := map[string]string{}
	for _, l := range cs.Lost {
		lost[l.Path] = l.Reason
	}
	items := collapse(cs.List, skipped, lost)
	if len(items) == 0 {
		return ""
	}
	if max < 1 {
		max = 1
	}
	if len(items) > max {
		items = groupItems(items, max)
	}
	var parts []string
	more, moreLost := 0, 0
	for i, it := range items {
		if i >= max-1 && len(items) > max {
			for _, n := range it.counts {
				more += n
			}
			if len(it.counts) == 0 {
				more++
			}
			moreLost += it.lost
			continue
		}
		parts = append(parts, it.text)
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

// collapse turns changes into items: a folder created or deleted with
// everything in it is one item.
func collapse(list []Change, skipped, lost map[string]string) []item {
	var out []item
	for i := 0; i < len(list); i++ {
		c := &list[i]
		it := item{path: c.Path, dir: c.IsDir(), counts: map[Action]int{}}
		a := c.Action()
		if c.Ignored() {
			it.text = displayItem(c.Path, it.dir) + " (ignored, not undoable)"
			it.counts[a]++
			it.lost++
			out = append(out, it)
			continue
		}
		// A folder that appeared or went away, everything in it with it.
		var inside Action
		switch {
		case a == Created && c.After.Kind == Dir, a == TypeChanged && c.After.Kind == Dir:
			inside = Created
		case a == Deleted && c.Before.Kind == Dir, a == TypeChanged && c.Before.Kind == Dir:
			inside = Deleted
		}
		if inside != 0 {
			files, size := 0, int64(0)
			j := i + 1
			for ; j < len(list) && isBelow(list[j].Path, c.Path) && list[j].Action() == inside && !list[j].Ignored(); j++ {
				if !list[j].IsDir() {
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
			if a == TypeChanged {
				it.dir = false
				text = changeText(c)
				if files > 0 {
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
			continue
		}
		if !it.dir {
			it.counts[a]++
		}
		text := changeText(c)
		why, notNow := skipped[c.Path]
		notNow = notNow && c.After != nil
		switch earlier, ok := lost[c.Path]; {
		case !c.Undoable() && ok && earlier != "":
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
func folderText(a Action, files int, size int64) string {
	switch {
	case a == Created && files == 0:
		return "new folder"
	case a == Created:
		return fmt.Sprintf("new, %s, %s", human.Count(files, "file", ""), human.Bytes(size))
	case files == 0:
		return "folder deleted"
	}
	return human.Count(files, "file", "") + " deleted"
}

// changeText says what happened to one path.
func changeText(c *Change) string {
	var parts []string
	switch a := c.Action(); a {
	case Created:
		switch c.After.Kind {
		case File:
			parts = append(parts, "new, "+human.Bytes(c.After.Size))
		case Symlink:
			parts = append(parts, "new symlink to "+display(c.After.Target))
		default:
			parts = append(parts, "new "+c.After.Kind.String())
		}
	case Deleted:
		parts = append(parts, "deleted")
	case TypeChanged:
		parts = append(parts, c.Before.Kind.String()+" → "+c.After.Kind.String())
	case TargetChanged:
		parts = append(parts, "symlink now to "+display(c.After.Target))
	case Edited:
		parts = append(parts, "edited")
	}
	if c.ModeChanged() {
		parts = append(parts, fmt.Sprintf("mode %04o → %04o", c.Before.Mode, c.After.Mode))
	}
	return strings.Join(parts, ", ")
}

// groupItems folds items into their folders at the deepest level where
// the summary still fits in max items.
func groupItems(items []item, max int) []item {
	best := groupAt(items, 1)
	for depth := 2; len(best) <= max; depth++ {
		g := groupAt(items, depth)
		if len(g) > max || len(g) == len(best) {
			break
		}
		best = g
	}
	return best
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
			out = append(out, item{path: dir, dir: true, counts: map[Action]int{}})
		}
		for a, n := range it.counts {
			out[i].counts[a] += n
		}
		out[i].lost += it.lost
	}
	for i := range out {
		if out[i].text == "" {
			text := countsText(out[i].counts)
			if out[i].lost > 0 {
				text += fmt.Sprintf(", %d of them not undoable", out[i].lost)
			}
			out[i].text = displayItem(out[i].path, true) + " (" + text + ")"
		}
	}
	return out
}

// countsText writes "3 new, 12 edited, 1 deleted".
func countsText(counts map[Action]int) string {
	var parts []string
	for _, a := range []Action{Created, Edited, Deleted, TypeChanged, TargetChanged, ModeChanged} {
		if n := counts[a]; n > 0 {
			word := a.String()
			if a == Created {
				word = "new"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, word))
		}
	}
	if len(parts) == 0 {
		return "changed"
	}
	return strings.Join(parts, ", ")
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
// last line says "and N more". isDir tells which of the paths are
// folders (shown with a trailing "/").
func FoldPaths(paths []string, isDir func(string) bool, max int) []string {
	if max < 1 {
		max = 1
	}
	if len(paths) <= max {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = displayItem(p, isDir(p))
		}
		return out
	}
	best := foldAt(paths, isDir, 1)
	for depth := 2; ; depth++ {
		g := foldAt(paths, isDir, depth)
		if len(g) > max || len(g) == len(best) {
			break
		}
		best = g
	}
	var out []string
	for i, f := range best {
		if i == max-1 && len(best) > max {
			more := 0
			for _, rest := range best[i:] {
				more += rest.paths
			}
			out = append(out, fmt.Sprintf("and %s more", human.Thousands(more)))
			break
		}
		out = append(out, f.text(isDir))
	}
	return out
}

// folded is a path, or a folder standing for the listed paths below it.
type folded struct {
	path           string
	files, folders int
	// paths counts the listed paths it stands for, itself included.
	paths int
}

func (f folded) text(isDir func(string) bool) string {
	if f.files+f.folders == 0 {
		return displayItem(f.path, isDir(f.path))
	}
	var parts []string
	if f.files > 0 {
		parts = append(parts, human.Thousands(f.files)+" "+plural(f.files, "file"))
	}
	if f.folders > 0 {
		parts = append(parts, human.Thousands(f.folders)+" "+plural(f.folders, "folder"))
	}
	return displayItem(f.path, true) + " (" + strings.Join(parts, ", ") + ")"
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// foldAt folds the paths more than depth folders deep into their folder
// at that depth, in the order the paths first show up.
func foldAt(paths []string, isDir func(string) bool, depth int) []folded {
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
}
