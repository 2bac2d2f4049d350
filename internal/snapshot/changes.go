package snapshot

// Change is one path whose state differs between two scans.
type Change struct {
	Path string
	// Before is the path's state before, nil if it did not exist; After
	// its state after, nil if it no longer exists.
	Before, After *Entry
}

// Action says what happened to a path.
type Action uint8

// The actions a change can be.
const (
	Created Action = iota + 1
	Deleted
	Edited
	ModeChanged
	TargetChanged
	TypeChanged
)

func (a Action) String() string {
	switch a {
	case Created:
		return "created"
	case Deleted:
		return "deleted"
	case Edited:
		return "edited"
	case ModeChanged:
		return "mode changed"
	case TargetChanged:
		return "symlink changed"
	case TypeChanged:
		return "type changed"
	}
	return "unchanged"
}

// Action returns what happened; an edit that also changed the mode is
// Edited (ModeChanged() tells the rest).
func (c *Change) Action() Action {
	switch {
	case c.Before == nil:
		return Created
	case c.After == nil:
		return Deleted
	case c.Before.Kind != c.After.Kind:
		return TypeChanged
	case c.Before.Kind == File && !c.sameContent():
		return Edited
	case c.Before.Kind == Symlink && c.Before.Target != c.After.Target:
		return TargetChanged
	}
	return ModeChanged
}

// ModeChanged reports whether the permission bits changed.
func (c *Change) ModeChanged() bool {
	return c.Before != nil && c.After != nil && c.Before.Kind == c.After.Kind && c.Before.Mode != c.After.Mode
}

func (c *Change) sameContent() bool {
	b, a := c.Before, c.After
	if b.Hashed() && a.Hashed() {
		return b.Hash == a.Hash
	}
	return b.sameStat(a)
}

// Ignored reports a change seen at a path outside the snapshot's scope
// (.gitignore, the exclusion setting): reported, not undoable.
func (c *Change) Ignored() bool {
	return (c.Before != nil && c.Before.Ignored()) || (c.After != nil && c.After.Ignored())
}

// Undoable reports whether undo can put the path back as it was.
func (c *Change) Undoable() bool {
	if c.Ignored() {
		return false
	}
	b := c.Before
	if b == nil {
		return true
	}
	switch b.Kind {
	case File:
		if b.Stored() {
			return true
		}
		// Only the mode changed, and the content is still there.
		return c.After != nil && c.After.Kind == File && c.sameContent()
	case Socket, Device:
		return c.After != nil && c.After.Kind == b.Kind
	}
	return true
}

// IsDir reports whether the path is a folder before or after.
func (c *Change) IsDir() bool {
	return (c.After != nil && c.After.Kind == Dir) || (c.Before != nil && c.Before.Kind == Dir)
}

// compare lists what differs between two scans, in walk order.
func compare(before, after []Entry) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		var c int
		switch {
		case i == len(before):
			c = 1
		case j == len(after):
			c = -1
		default:
			c = cmpPath(before[i].Path, after[j].Path)
		}
		switch {
		case c < 0:
			b := before[i]
			out = append(out, Change{Path: b.Path, Before: &b})
			i++
		case c > 0:
			a := after[j]
			out = append(out, Change{Path: a.Path, After: &a})
			j++
		default:
			if differ(&before[i], &after[j]) {
				b, a := before[i], after[j]
				out = append(out, Change{Path: a.Path, Before: &b, After: &a})
			}
			i++
			j++
		}
	}
	return out
}

// differ reports whether a path changed between two scans. A path left
// out of the snapshot changed if its stat data did (for a folder, its
// listing); a snapshotted one if its kind, mode, content or target did.
func differ(b, a *Entry) bool {
	if b.Ignored() || a.Ignored() {
		if b.Kind != a.Kind {
			return true
		}
		if b.Kind == Dir {
			return b.Mtime != a.Mtime || b.Ino != a.Ino
		}
		return !b.sameStat(a) || b.Mode != a.Mode
	}
	return !b.sameState(a)
}
