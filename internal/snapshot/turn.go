package snapshot

import (
	"errors"
	"fmt"
)

// Turn records what one turn changes in the workspace, command by
// command. The engine calls Before ahead of each command that can change
// files and After once it is over, with the command's index as key;
// Commit ends the turn. Every call is safe to repeat after a crash: the
// turn's records are replayed when it is opened again, and After returns
// what it recorded for a key instead of recording it twice.
type Turn struct {
	s     *Store
	seq   int
	ix    *index
	log   *recordFile
	steps []step
	lim   *limits
	// scanned is set once the index reflects a full scan made in this
	// turn, so that a later Before(nil) need not walk again.
	scanned bool
}

// Turn opens the recording of turn seq, resuming it if it was begun.
func (s *Store) Turn(seq int) (*Turn, error) {
	if err := s.tidy(); err != nil {
		return nil, err
	}
	ix, steps, err := s.current(seq)
	if err != nil {
		return nil, err
	}
	log, _, err := openRecords(s.turnPath(seq, "log"))
	if err != nil {
		return nil, err
	}
	return &Turn{
		s:     s,
		seq:   seq,
		ix:    ix,
		log:   log,
		steps: steps,
		lim:   &limits{turnLeft: s.opts.TurnLimit, budgetLeft: s.opts.Budget - ix.stored},
	}, nil
}

// current loads the saved index and replays onto it the records of the
// turns it does not hold yet, up to turn seq, whose steps it returns.
func (s *Store) current(seq int) (*index, []step, error) {
	ix, err := loadIndex(s.indexPath())
	if err != nil {
		return nil, nil, err
	}
	var mine []step
	first := ix.turn + 1
	for t := min(first, seq); t <= seq; t++ {
		steps, err := readSteps(s.turnPath(t, "log"))
		if err != nil {
			return nil, nil, err
		}
		if t >= first {
			replay(ix, steps)
		}
		if t == seq {
			mine = steps
		}
	}
	return ix, mine, nil
}

// replay applies recorded steps to an index: each changed path takes its
// state after the step.
func replay(ix *index, steps []step) {
	updates := map[string]*Entry{}
	for _, st := range steps {
		for _, c := range st.changes {
			updates[c.Path] = c.After
		}
	}
	ix.apply(updates)
}

// Close releases the turn's record file.
func (t *Turn) Close() error { return t.log.close() }

// Before makes sure the snapshot holds the current state of the given
// paths (a file command's target) or, with nil, of the whole workspace
// (before a RUN_COMMAND), storing the content of what changed since the
// last scan. What it finds changed is not the turn's doing: it is
// recorded as the new starting point, not as something to undo.
func (t *Turn) Before(paths []string) error {
	var changes []Change
	var skipped []Skipped
	if paths == nil {
		if t.scanned {
			return nil
		}
		res, err := t.s.scan(t.ix.entries, false, true, t.lim)
		if err != nil {
			return err
		}
		changes, skipped = compare(t.ix.entries, res.entries), res.skipped
		t.ix.entries = res.entries
		t.ix.stored += res.written
		t.scanned = true
	} else {
		var err error
		changes, skipped, err = t.refresh(paths)
		if errors.As(err, new(*errNotDir)) {
			// A symlinked folder on the way: only a full scan sees where
			// the command's writes really land.
			return t.Before(nil)
		}
		if err != nil {
			return err
		}
	}
	t.s.explain(skipped)
	// The contents just stored are what undo will need once the command
	// has run: they must be on disk before it starts, and before the
	// index or a record refers to them.
	if err := t.s.obj.barrier(); err != nil {
		return err
	}
	if len(changes) > 1000 && len(changes) > len(t.ix.entries)/4 {
		// Most of the workspace is new to the index (the session's first
		// scan): saving the index costs less than recording it all. It
		// keeps its turn number, so reopening this turn still replays the
		// turn's own records onto it.
		if err := t.ix.save(t.s.indexPath()); err != nil {
			return err
		}
		changes = nil
	}
	// What could not be stored is recorded even when nothing changed: it
	// is why a later change to it cannot be undone.
	if len(changes) > 0 || len(skipped) > 0 {
		st := step{base: true, changes: changes, skipped: skipped}
		if err := t.log.append(encodeStep(st), false); err != nil {
			return err
		}
		t.steps = append(t.steps, st)
	}
	return nil
}

// After records what the command with index key changed: in the given
// paths, or with nil, anywhere in the workspace. It returns the changes,
// or those recorded earlier for the same key.
func (t *Turn) After(key int, paths []string) (Changes, error) {
	for i, st := range t.steps {
		if !st.base && st.key == key {
			return Changes{List: st.changes, Skipped: st.skipped, Lost: lostIn(t.steps, i)}, nil
		}
	}
	var changes []Change
	var skipped []Skipped
	if paths != nil {
		var err error
		changes, skipped, err = t.refresh(paths)
		if errors.As(err, new(*errNotDir)) {
			paths = nil
		} else if err != nil {
			return Changes{}, err
		}
	}
	if paths == nil {
		res, err := t.s.scan(t.ix.entries, true, false, t.lim)
		if err != nil {
			return Changes{}, err
		}
		changes, skipped = compare(t.ix.entries, res.entries), res.skipped
		t.ix.entries = res.entries
		t.ix.stored += res.written
		t.scanned = true
	}
	t.s.explain(skipped)
	st := step{key: key, changes: changes, skipped: skipped}
	if err := t.log.append(encodeStep(st), true); err != nil {
		return Changes{}, err
	}
	t.steps = append(t.steps, st)
	return Changes{List: changes, Skipped: skipped, Lost: lostIn(t.steps, len(t.steps)-1)}, nil
}

// Commit ends the turn: the index is saved as the start of the next one,
// and the store is brought back within its budget.
func (t *Turn) Commit() (GCReport, error) {
	if err := t.s.obj.barrier(); err != nil {
		return GCReport{}, err
	}
	t.ix.turn = max(t.ix.turn, t.seq)
	if err := t.ix.save(t.s.indexPath()); err != nil {
		return GCReport{}, err
	}
	if t.ix.stored <= t.s.opts.Budget {
		return GCReport{Size: t.ix.stored}, nil
	}
	return t.s.GC(t.s.opts.Budget)
}

// Refresh brings the saved index up to date with the workspace outside
// any turn, storing what changed since: the runner calls it while the
// person is away (after writing a request), so that the next turn starts
// without reading anything. It does nothing while a turn is unfinished.
func (s *Store) Refresh() error {
	if err := s.tidy(); err != nil {
		return err
	}
	ix, err := loadIndex(s.indexPath())
	if err != nil {
		return err
	}
	if open, err := s.turnsAfter(ix.turn); err != nil || len(open) > 0 {
		return err
	}
	lim := &limits{turnLeft: s.opts.TurnLimit, budgetLeft: s.opts.Budget - ix.stored}
	res, err := s.scan(ix.entries, false, true, lim)
	if err != nil {
		return err
	}
	ix.entries = res.entries
	ix.stored += res.written
	if err := s.obj.barrier(); err != nil {
		return err
	}
	if err := ix.save(s.indexPath()); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}
