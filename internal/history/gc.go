package history

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// GCReport says what a collection did.
type GCReport struct {
	// Pruned are the turns, oldest first, that can no longer be undone.
	Pruned []int
	// Freed is the disk space given back; Size what the contents take.
	Freed, Size int64
	// Over: the workspace's contents and the newest turn alone exceed the
	// budget.
	Over bool
}

// Warning returns the line to show the person, or "".
func (r GCReport) Warning(budget int64) string {
	var parts []string
	if n := len(r.Pruned); n > 0 {
		parts = append(parts, fmt.Sprintf("snapshots of %s dropped to stay within the %s snapshot budget: %s can no longer be undone",
			turnList(r.Pruned), human.Bytes(budget), map[bool]string{true: "it", false: "they"}[n == 1]))
	}
	if r.Over {
		parts = append(parts, fmt.Sprintf("the snapshot store takes %s, over its %s budget, for the current workspace and the last turn alone",
			human.Bytes(r.Size), human.Bytes(budget)))
	}
	return strings.Join(parts, "; ")
}

// turnList names turns: "turn 3", "turns 1-4", "turns 1, 3 and 4".
func turnList(seqs []int) string {
	if len(seqs) == 1 {
		return fmt.Sprintf("turn %d", seqs[0])
	}
	if seqs[len(seqs)-1]-seqs[0] == len(seqs)-1 && len(seqs) > 2 {
		return fmt.Sprintf("turns %d-%d", seqs[0], seqs[len(seqs)-1])
	}
	names := make([]string, len(seqs))
	for i, s := range seqs {
		names[i] = strconv.Itoa(s)
	}
	return "turns " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// ErrPruned is returned for a turn whose contents were dropped.
var ErrPruned = errors.New("its snapshot was dropped to stay within the snapshot budget")

// hashes lists the contents a turn's records refer to.
func hashes(recs []Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.From, r.Base)
		for _, h := range r.Bodies {
			out = append(out, h)
		}
		for _, c := range r.Changes {
			for _, e := range []*Entry{c.Before, c.After} {
				if e != nil && e.stored() {
					out = append(out, e.Hash)
				}
			}
		}
	}
	return out
}

// GC drops the contents nothing refers to and, while over budget, the
// oldest turns' (never the newest's). The caller holds the session lock.
func (h *History) GC(budget int64) (GCReport, error) {
	var rep GCReport
	if err := h.tidy(); err != nil {
		return rep, err
	}
	ix, err := loadIndex(h.indexPath())
	if err != nil {
		return rep, err
	}
	if err := h.obj.load(); err != nil {
		return rep, err
	}
	start := h.obj.size()
	refs := map[string]int{}
	for _, e := range ix.Entries {
		if e.stored() {
			refs[e.Hash]++
		}
	}
	seqs, err := h.store.Turns(h.id)
	if err != nil {
		return rep, err
	}
	var kept []*Turn
	for _, seq := range seqs {
		t, err := h.store.ReadTurn(h.id, seq)
		if err != nil {
			return rep, err
		}
		if !t.Has(RecordPruned) {
			kept = append(kept, t)
			for _, x := range hashes(t.Records) {
				refs[x]++
			}
		}
	}
	// A content no longer referred to counts as given back: compact
	// rewrites its pack when that pays or the budget needs it.
	size := start
	for x, at := range h.obj.table {
		if refs[x] == 0 {
			size -= at.n
		}
	}
	for len(kept) > 1 && size > budget {
		t := kept[0]
		kept = kept[1:]
		w, err := h.store.OpenTurn(h.id, t.Sequence)
		if err == nil {
			err = w.Append(Record{Kind: RecordPruned})
			w.Close()
		}
		if err != nil {
			return rep, err
		}
		rep.Pruned = append(rep.Pruned, t.Sequence)
		for _, x := range hashes(t.Records) {
			if refs[x]--; refs[x] == 0 {
				size -= h.obj.table[x].n
			}
		}
	}
	if err := h.obj.compact(func(x string) bool { return refs[x] > 0 }, size > budget || len(rep.Pruned) > 0); err != nil {
		return rep, err
	}
	rep.Size = h.obj.size()
	rep.Freed = max(start-rep.Size, 0)
	rep.Over = rep.Size > budget
	return rep, nil
}
