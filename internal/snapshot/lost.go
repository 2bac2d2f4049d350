package snapshot

import (
	"fmt"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// The reasons a scan gives for content it did not store because of a
// setting; a turn spells the setting's value out (explain).
const (
	reasonLimit  = "over the snapshot limit"
	reasonBudget = "over the snapshot budget"
	// reasonNotStored and reasonIgnored are why undo leaves a path as
	// it is.
	reasonNotStored = "its earlier content was not snapshotted"
	reasonIgnored   = "ignored by .gitignore or the settings, so not snapshotted"
)

// explain spells out the settings in skip reasons, "past the turn's
// snapshot limit of 1 GB", so that the LLM and the person know which
// setting it is; the limit is the turn's, so a file smaller than it can
// be past it.
func (s *Store) explain(sk []Skipped) {
	for i := range sk {
		switch sk[i].Reason {
		case reasonLimit:
			sk[i].Reason = "past the turn's snapshot limit of " + human.ExactBytes(s.opts.TurnLimit)
		case reasonBudget:
			sk[i].Reason = "past the snapshot budget of " + human.ExactBytes(s.opts.Budget)
		}
	}
}

// lostIn lists the changes of steps[i] that undo cannot reverse, paths
// left out of snapshots aside, each with the reason its earlier content
// was not stored when an earlier step of the turn recorded one.
func lostIn(steps []step, i int) []Skipped {
	why := map[string]string{}
	for _, st := range steps[:i] {
		for _, sk := range st.skipped {
			why[sk.Path] = sk.Reason
		}
	}
	var out []Skipped
	for _, c := range steps[i].changes {
		if !c.Ignored() && !c.Undoable() {
			out = append(out, Skipped{Path: c.Path, Reason: why[c.Path]})
		}
	}
	return out
}

// notUndoable lists, in walk order, the paths a turn's commands changed
// that its undo cannot put back, paths left out of snapshots aside, with
// the reason their content before the turn was not stored ("" when the
// turn did not record one). A path first changed by a command for which
// kept (if not nil) is true is left out: its earlier content is kept
// elsewhere.
func notUndoable(steps []step, kept func(key int) bool) []Skipped {
	why := map[string]string{}
	first := map[string]string{}
	for _, st := range steps {
		if !st.base {
			for _, c := range st.changes {
				if _, ok := first[c.Path]; !ok {
					first[c.Path] = why[c.Path]
				}
			}
		}
		for _, sk := range st.skipped {
			why[sk.Path] = sk.Reason
		}
	}
	elsewhere := keptElsewhere(steps, kept)
	var out []Skipped
	for _, p := range plan(steps) {
		c := Change{Path: p.path, Before: p.before, After: p.after}
		if !p.ignored && !c.Undoable() && !elsewhere[p.path] {
			out = append(out, Skipped{Path: p.path, Reason: first[p.path]})
		}
	}
	return out
}

// keptElsewhere tells the paths first changed by a command for which
// kept (if not nil) is true: their earlier content is kept elsewhere.
func keptElsewhere(steps []step, kept func(key int) bool) map[string]bool {
	if kept == nil {
		return nil
	}
	seen := map[string]bool{}
	elsewhere := map[string]bool{}
	for _, st := range steps {
		if st.base {
			continue
		}
		for _, c := range st.changes {
			if !seen[c.Path] {
				seen[c.Path] = true
				elsewhere[c.Path] = kept(st.key)
			}
		}
	}
	return elsewhere
}

// leaveToKeeper drops from the report's not undone the paths whose
// earlier content the snapshot lacks but is kept elsewhere (see
// keptElsewhere): whoever keeps it puts them back, and they are undone.
func leaveToKeeper(rep *UndoReport, elsewhere map[string]bool) {
	out := rep.NotUndone[:0]
	for _, n := range rep.NotUndone {
		if !elsewhere[n.Path] || n.Reason != reasonNotStored && n.Reason != reasonIgnored {
			out = append(out, n)
		}
	}
	rep.NotUndone = out
}

// explainNotUndone adds to the report's "earlier content was not
// snapshotted" the reason the turn recorded, if it did.
func explainNotUndone(rep *UndoReport, steps []step) {
	why := map[string]string{}
	for _, l := range notUndoable(steps, nil) {
		why[l.Path] = l.Reason
	}
	for i, n := range rep.NotUndone {
		if w := why[n.Path]; w != "" && n.Reason == reasonNotStored {
			rep.NotUndone[i].Reason = reasonNotStored + ": " + w
		}
	}
}

// NotUndoable lists the paths the turn's commands changed so far that
// undo cannot put back (past the snapshot limit, unreadable), paths left
// out of snapshots aside, and why. kept, if not nil, tells the commands
// whose earlier content the caller keeps itself (the journal keeps what
// file commands replace): a path one of them changed first is left out.
func (t *Turn) NotUndoable(kept func(key int) bool) []Skipped {
	return notUndoable(t.steps, kept)
}

// partlyShown caps the paths a partly-undoable warning names.
const partlyShown = 5

// PartlyUndoable is the warning for the person about turn seq, of which
// lost (see NotUndoable) cannot be undone: "turn 3 is only partly
// undoable: big.bin (past the turn's snapshot limit of 1 GB)". It is "" when
// nothing is lost.
func PartlyUndoable(seq int, lost []Skipped) string {
	if len(lost) == 0 {
		return ""
	}
	var names []string
	for i, l := range lost {
		if i == partlyShown {
			names = append(names, fmt.Sprintf("and %d more", len(lost)-partlyShown))
			break
		}
		why := l.Reason
		if why == "" {
			why = "not snapshotted"
		}
		names = append(names, fmt.Sprintf("%s (%s)", display(l.Path), why))
	}
	return fmt.Sprintf("turn %d is only partly undoable: %s", seq, strings.Join(names, ", "))
}
