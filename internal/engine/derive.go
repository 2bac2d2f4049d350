package engine

import (
	"fmt"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/history"
)

// The record keeps a file's content only where it cannot be rebuilt: a
// change's new content follows from the content before it and its
// command, so any version the turn's changes led to is rebuilt by
// replaying them from the nearest kept (or command-given) content.

// tracker is the line-range tracker a file's last line-range edit left,
// kept by path so that a run of them neither replays nor reads the base at
// each edit. The files are ones the turn keeps copies of, within KeepLimit.
type tracker struct {
	base string
	n    int // ranges applied
	tr   *edit.Tracker
}

// ok reports whether change k stands: made, or to be made by this run.
func (r *turnRun) ok(k int) bool {
	res, found := r.results[k]
	return found && res.Status == command.OK
}

// startsChain reports whether the content before change k is had without
// replay, or does not matter (a line-range edit continuing an earlier
// one's numbering needs that one's base).
func (r *turnRun) startsChain(k int) bool {
	ch := r.changes[k]
	if ch.Base != "" && ch.Base != ch.From {
		return false
	}
	t := r.cmds[k].Type
	return t == command.CreateFile || ch.To == "" || ch.From == "" || r.t.Kept(ch.From)
}

// chainTo returns the changes of p to replay, oldest first, to rebuild
// content h as the changes before command i left it; nil if it cannot be.
func (r *turnRun) chainTo(p, h string, i int) []int {
	ks := r.byPath[p]
	var chain []int
	want := h
	for x := len(ks) - 1; x >= 0; x-- {
		k := ks[x]
		ch := r.changes[k]
		if k >= i || !r.ok(k) {
			continue
		}
		if ch.To == "" || ch.To != want {
			if len(chain) == 0 {
				continue // an earlier change may have left this content
			}
			return nil
		}
		chain = append(chain, k)
		if r.startsChain(k) {
			for a, b := 0, len(chain)-1; a < b; a, b = a+1, b-1 {
				chain[a], chain[b] = chain[b], chain[a]
			}
			return chain
		}
		want = ch.From
	}
	return nil
}

// text returns content h of p as command i finds it: kept, or rebuilt.
func (r *turnRun) text(p, h string, i int) (string, error) {
	if r.t.Kept(h) {
		return r.t.Content(h)
	}
	chain := r.chainTo(p, h, i)
	if chain == nil {
		return "", fmt.Errorf("the content %s of '%s' is neither kept nor rebuildable", h, p)
	}
	return r.replay(chain)
}

// replay carries out a chain of changes in memory, checking each result
// against its recorded hash.
func (r *turnRun) replay(chain []int) (string, error) {
	first := r.changes[chain[0]]
	var text string
	if first.From != "" && r.t.Kept(first.From) {
		var err error
		if text, err = r.t.Content(first.From); err != nil {
			return "", err
		}
	}
	var tr *edit.Tracker
	for _, k := range chain {
		ch, c := r.changes[k], r.cmds[k]
		switch {
		case ch.Base != "":
			if ch.Base == ch.From || tr == nil {
				tr = edit.NewTracker(text)
			}
			next, err := tr.Apply(edit.LineRange{Start: ch.Range[0], End: ch.Range[1], Text: c.Content})
			if err != nil {
				return "", fmt.Errorf("rebuild '%s': %w", ch.Path, err)
			}
			text = next
		case c.Type == command.CreateFile:
			text, tr = c.Content, nil
		default:
			a, err := edit.ApplyEdits(text, c.Edits)
			if err != nil {
				return "", fmt.Errorf("rebuild '%s': %w", ch.Path, err)
			}
			text, tr = a.Text, nil
		}
		if history.Hash(text) != ch.To {
			return "", fmt.Errorf("rebuild '%s': command %d does not give the content journaled", ch.Path, k+1)
		}
	}
	return text, nil
}
