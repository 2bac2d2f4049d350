package snapshot

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/courier-agent/courier/internal/human"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// GCReport says what a collection did.
type GCReport struct {
	// Pruned lists the turns, oldest first, whose snapshots were dropped
	// to meet the budget: they can no longer be undone.
	Pruned []int
	// Freed is the disk space given back; Size what the store takes on
	// disk now, as du counts it.
	Freed, Size int64
	// Over is set when the store is still over the budget: what protects
	// the current workspace and the newest turn alone exceed it.
	Over bool
}

// Warning returns the line to show the person, "" when there is nothing
// to say.
func (r GCReport) Warning(budget int64) string {
	var parts []string
	if n := len(r.Pruned); n > 0 {
		verb := "they"
		if n == 1 {
			verb = "it"
		}
		parts = append(parts, fmt.Sprintf("snapshots of %s dropped to stay within the %s snapshot budget: %s can no longer be undone",
			turnList(r.Pruned), human.Bytes(budget), verb))
	}
	if r.Over {
		parts = append(parts, fmt.Sprintf("the snapshot store takes %s, over its %s budget, for the current workspace and the last turn alone",
			human.Bytes(r.Size), human.Bytes(budget)))
	}
	return strings.Join(parts, "; ")
}

// turnList names turns: "turn 3", "turns 1-4" when they follow each
// other, else "turns 1, 3 and 4" (a turn answered by an undo is no
// turn of its own).
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

// ErrPruned is returned for a turn whose snapshot was dropped.
var ErrPruned = errors.New("its snapshot was dropped to stay within the snapshot budget")

// ErrNoSnapshot is returned for a turn that recorded nothing: it changed
// no file and ran no command.
var ErrNoSnapshot = errors.New("it changed no file and ran no command")

// turnFiles lists the sequence numbers that have a file with the given
// extension in the turns folder, oldest first.
func (s *Store) turnFiles(ext string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, "turns"))
	if err != nil {
		return nil, fmt.Errorf("snapshot turns: %w", err)
	}
	var seqs []int
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), "."+ext)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil {
			seqs = append(seqs, n)
		}
	}
	sort.Ints(seqs)
	return seqs, nil
}

// turnsAfter lists the recorded turns later than seq.
func (s *Store) turnsAfter(seq int) ([]int, error) {
	all, err := s.turnFiles("log")
	if err != nil {
		return nil, err
	}
	i := sort.SearchInts(all, seq+1)
	return all[i:], nil
}

func (s *Store) pruned(seq int) bool {
	_, err := os.Stat(s.turnPath(seq, "pruned"))
	return err == nil
}

// GC removes the contents nothing refers to any more and, while the store
// is over budget, drops the snapshots of the oldest turns (never the
// newest, nor one whose undo is unfinished). The caller holds the session
// lock and has no turn open.
func (s *Store) GC(budget int64) (GCReport, error) {
	var rep GCReport
	if err := s.tidy(); err != nil {
		return rep, err
	}
	ix, err := loadIndex(s.indexPath())
	if err != nil {
		return rep, err
	}
	use, err := s.diskUse()
	if err != nil {
		return rep, err
	}
	var loose int64
	for _, n := range use.loose {
		loose += n
	}
	start := use.other + loose + use.packs
	// rep.Size counts a packed content dropped as given back: its pack
	// is rewritten below when that pays, or when the budget needs it.
	rep.Size = start
	refs := map[Hash]int{}
	live := map[Hash]bool{}
	for i := range ix.entries {
		if ix.entries[i].Stored() {
			live[ix.entries[i].Hash] = true
		}
	}
	seqs, err := s.turnFiles("log")
	if err != nil {
		return rep, err
	}
	turnRefs := map[int][]Hash{}
	var kept []int
	for _, seq := range seqs {
		if s.pruned(seq) {
			continue
		}
		steps, err := readSteps(s.turnPath(seq, "log"))
		if err != nil {
			return rep, err
		}
		hs := stepHashes(steps)
		for _, h := range hs {
			refs[h]++
		}
		turnRefs[seq] = hs
		kept = append(kept, seq)
	}
	used := func(h Hash) bool { return live[h] || refs[h] > 0 }
	drop := func(h Hash) error {
		if n, ok := use.loose[h]; ok {
			if err := s.dropObject(h); err != nil {
				return err
			}
			delete(use.loose, h)
			loose -= n
			rep.Size -= n
		}
		if n, ok := use.packed[h]; ok {
			delete(use.packed, h)
			rep.Size -= n
		}
		return nil
	}
	for _, m := range []map[Hash]int64{use.loose, use.packed} {
		for h := range m {
			if !used(h) {
				if err := drop(h); err != nil {
					return rep, err
				}
			}
		}
	}
	for len(kept) > 1 && rep.Size > budget {
		seq := kept[0]
		if s.undoUnfinished(seq) {
			break
		}
		if err := atomicfile.Write(s.turnPath(seq, "pruned"), nil, 0o644); err != nil {
			return rep, err
		}
		rep.Pruned = append(rep.Pruned, seq)
		kept = kept[1:]
		for _, h := range turnRefs[seq] {
			refs[h]--
			if !used(h) {
				if err := drop(h); err != nil {
					return rep, err
				}
			}
		}
	}
	packs, err := s.obj.packs.compact(func(h Hash) bool {
		_, ok := use.packed[h]
		return ok
	}, budget-rep.Size)
	if err != nil {
		return rep, err
	}
	rep.Size = use.other + loose + packs
	rep.Freed = max(start-rep.Size, 0)
	rep.Over = rep.Size > budget
	ix.stored = rep.Size
	if err := ix.save(s.indexPath()); err != nil {
		return rep, err
	}
	return rep, nil
}

// stepHashes lists the contents a turn's records refer to.
func stepHashes(steps []step) []Hash {
	seen := map[Hash]bool{}
	var out []Hash
	add := func(e *Entry) {
		if e != nil && e.Stored() && !seen[e.Hash] {
			seen[e.Hash] = true
			out = append(out, e.Hash)
		}
	}
	for _, st := range steps {
		for _, c := range st.changes {
			add(c.Before)
			add(c.After)
		}
	}
	return out
}

// storeUse is the store's disk use as du would count it.
type storeUse struct {
	// loose is the disk space of each content kept as a file of its own
	// (a whole block for a content of a few bytes); packed the bytes of
	// each content in a pack.
	loose, packed map[Hash]int64
	// packs is what the packs folder takes, other everything else
	// (folders, the index, the turns' records, later work set aside).
	packs, other int64
}

// diskUse measures the store.
func (s *Store) diskUse() (storeUse, error) {
	u := storeUse{loose: map[Hash]int64{}}
	pu, packed, err := s.obj.packs.use()
	if err != nil {
		return u, err
	}
	u.packed, u.packs = packed, pu.disk
	err = filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile: a crash's temporary file
			}
			return err
		}
		if p == s.obj.packs.dir {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		n := onDisk(info)
		if rel, err := filepath.Rel(s.obj.dir, p); err == nil && !d.IsDir() && !strings.HasPrefix(rel, "..") {
			b, err := hex.DecodeString(strings.ReplaceAll(rel, string(filepath.Separator), ""))
			if err == nil && len(b) == len(Hash{}) {
				var h Hash
				copy(h[:], b)
				u.loose[h] = n
				return nil
			}
		}
		u.other += n
		return nil
	})
	if err != nil {
		return u, fmt.Errorf("snapshot store: %w", err)
	}
	return u, nil
}

func (s *Store) dropObject(h Hash) error {
	if err := os.Remove(s.obj.path(h)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("snapshot store: %w", err)
	}
	return nil
}

// prunedError explains why a turn cannot be undone.
func prunedError(seq int) error {
	return fmt.Errorf("turn %d cannot be undone: %w", seq, ErrPruned)
}
