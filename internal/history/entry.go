package history

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// Kind is the type of a path in the workspace.
type Kind uint8

// The kinds of path courier tells apart.
const (
	File Kind = iota + 1
	Dir
	Symlink
	FIFO
	Socket
	Device
)

func (k Kind) String() string {
	if k >= File && k <= Device {
		return [...]string{"file", "folder", "symlink", "fifo", "socket", "device"}[k-1]
	}
	return "nothing"
}

// Flags of an entry.
const (
	// Ignored marks a path seen but left out: .gitignore or a setting
	// leaves it out, so only its presence and its stat data are known.
	Ignored uint8 = 1 << iota
	// Stored says the content is in the content store.
	Stored
	// racy marks an entry whose times were too close to the scan for its
	// stat data to prove the content unchanged next time (git's "racy
	// clean" problem): the next scan reads it again.
	racy
)

// Entry is one path of the workspace as courier saw it: git's index
// entry, with the content's hash once read.
type Entry struct {
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Mode holds the permission bits, setuid, setgid and sticky (07777).
	Mode uint32 `json:"mode"`
	Size int64  `json:"size,omitempty"`
	// Mtime and Ctime are in nanoseconds since the epoch.
	Mtime int64  `json:"mtime,omitempty"`
	Ctime int64  `json:"ctime,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Dev   uint64 `json:"dev,omitempty"`
	// Hash is the content's hash, "" while unknown.
	Hash string `json:"hash,omitempty"`
	// Target is a symlink's target, as written (never followed).
	Target string `json:"target,omitempty"`
	Flags  uint8  `json:"flags,omitempty"`
}

// MarshalJSON writes the entry with its path and target as names (see
// encName): JSON strings hold UTF-8, file names any bytes.
func (e Entry) MarshalJSON() ([]byte, error) {
	type plain Entry
	p := plain(e)
	p.Path, p.Target = encName(e.Path), encName(e.Target)
	return json.Marshal(p)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (e *Entry) UnmarshalJSON(data []byte) error {
	type plain Entry
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*e = Entry(p)
	e.Path, e.Target = decName(p.Path), decName(p.Target)
	return nil
}

// encName writes a file name as a JSON string can hold it: as it is when
// it is UTF-8, else as a NUL (which no file name holds) and its bytes in
// base64.
func encName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return "\x00" + base64.StdEncoding.EncodeToString([]byte(s))
}

func decName(s string) string {
	if b64, ok := strings.CutPrefix(s, "\x00"); ok {
		if raw, err := base64.StdEncoding.DecodeString(b64); err == nil {
			return string(raw)
		}
	}
	return s
}

func (e *Entry) ignored() bool { return e.Flags&Ignored != 0 }
func (e *Entry) stored() bool  { return e.Flags&Stored != 0 }

// sameStat reports whether the stat data promise unchanged content: what
// git compares before trusting its index.
func (e *Entry) sameStat(o *Entry) bool {
	return e.Kind == o.Kind && e.Size == o.Size && e.Mtime == o.Mtime &&
		e.Ctime == o.Ctime && e.Ino == o.Ino && e.Dev == o.Dev
}

// sameContent reports whether two files hold the same content: by hash,
// else by stat data.
func (e *Entry) sameContent(o *Entry) bool {
	if e.Hash != "" && o.Hash != "" {
		return e.Hash == o.Hash
	}
	return e.sameStat(o)
}

// differ reports whether a path changed between two looks. A path left
// out changed if its stat data did (for a folder, its listing); one in
// the history if its kind, mode, content or target did.
func differ(b, a *Entry) bool {
	switch {
	case b.Kind != a.Kind:
		return true
	case b.ignored() || a.ignored():
		if b.Kind == Dir {
			return b.Mtime != a.Mtime || b.Ino != a.Ino
		}
		return !b.sameStat(a) || b.Mode != a.Mode
	case b.Mode != a.Mode:
		return true
	case b.Kind == File:
		return !b.sameContent(a)
	}
	return b.Kind == Symlink && b.Target != a.Target
}

// Change is what happened to one path: its state before and after (nil:
// it did not exist). It is the one description of a change: what a turn's
// records hold, what undo reverses, what log and diff show.
type Change struct {
	Path   string `json:"-"` // the entries' path
	Before *Entry `json:"before,omitempty"`
	After  *Entry `json:"after,omitempty"`
}

// Skipped is a path whose content could not be kept, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// MarshalJSON writes the path as a name (see encName).
func (s Skipped) MarshalJSON() ([]byte, error) {
	type plain Skipped
	return json.Marshal(plain{Path: encName(s.Path), Reason: s.Reason})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *Skipped) UnmarshalJSON(data []byte) error {
	type plain Skipped
	var p plain
	err := json.Unmarshal(data, &p)
	*s = Skipped{Path: decName(p.Path), Reason: p.Reason}
	return err
}

// Action says what happened, in words: created, deleted, edited, mode
// changed, symlink changed, type changed.
func (c *Change) Action() string {
	b, a := c.Before, c.After
	switch {
	case b == nil:
		return "created"
	case a == nil:
		return "deleted"
	case b.Kind != a.Kind:
		return "type changed"
	case b.Kind == File && !b.sameContent(a):
		return "edited"
	case b.Kind == Symlink && b.Target != a.Target:
		return "symlink changed"
	}
	return "mode changed"
}

// modeChanged reports whether only the permission bits of the same kind
// changed (besides the content, perhaps).
func (c *Change) modeChanged() bool {
	return c.Before != nil && c.After != nil && c.Before.Kind == c.After.Kind && c.Before.Mode != c.After.Mode
}

// Ignored reports a change seen at a path left out of the history
// (.gitignore, the exclusion setting): reported, not undoable.
func (c *Change) Ignored() bool {
	return (c.Before != nil && c.Before.ignored()) || (c.After != nil && c.After.ignored())
}

// Undoable reports whether undo can put the path back as it was.
func (c *Change) Undoable() bool {
	b := c.Before
	switch {
	case c.Ignored():
		return false
	case b == nil || b.stored():
		return true
	case b.Kind == File:
		// Only the mode changed, and the content is still there.
		return c.After != nil && c.After.Kind == File && b.sameContent(c.After)
	case b.Kind == Socket || b.Kind == Device:
		return c.After != nil && c.After.Kind == b.Kind
	}
	return true
}

// isDir reports whether the path is a folder before or after.
func (c *Change) isDir() bool {
	return (c.After != nil && c.After.Kind == Dir) || (c.Before != nil && c.Before.Kind == Dir)
}

// compare lists what differs between two looks at the workspace, in walk
// order.
func compare(before, after []Entry) []Change {
	var out []Change
	for i, j := 0, 0; i < len(before) || j < len(after); {
		c := 1
		switch {
		case j == len(after):
			c = -1
		case i < len(before):
			c = cmpPath(before[i].Path, after[j].Path)
		}
		switch {
		case c < 0:
			out = append(out, Change{Path: before[i].Path, Before: &before[i]})
			i++
		case c > 0:
			out = append(out, Change{Path: after[j].Path, After: &after[j]})
			j++
		default:
			if differ(&before[i], &after[j]) {
				out = append(out, Change{Path: after[j].Path, Before: &before[i], After: &after[j]})
			}
			i++
			j++
		}
	}
	return out
}

// cmpPath orders paths as a depth-first walk with sorted folder listings
// visits them: byte order, except that "/" sorts before every other byte,
// so a folder's contents come right after it. The workspace folder itself
// is the entry with the empty path, first of all.
func cmpPath(a, b string) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		ca, cb := a[i], b[i]
		switch {
		case ca == cb:
			continue
		case ca == '/':
			return -1
		case cb == '/':
			return 1
		case ca < cb:
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// isBelow reports whether p is inside folder dir ("" holds everything).
func isBelow(p, dir string) bool {
	if dir == "" {
		return p != ""
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir)
}

// parentOf returns the folder holding p, "" at the top.
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// baseOf returns the last element of p.
func baseOf(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// join appends name to folder dir.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// display writes a path for people and the LLM: the workspace folder is
// ".", and a path with control characters, invalid UTF-8 or the
// punctuation of a summary is quoted so it cannot pass for other text.
func display(p string) string {
	if p == "" {
		return "."
	}
	if !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool {
		return r < 0x20 || r == 0x7f || r == '"' || r == '(' || r == ',' || unicode.Is(unicode.Cf, r)
	}) {
		return strconv.Quote(p)
	}
	return p
}

// index is the workspace as last seen, in walk order, with the last turn
// whose records it holds: opening a later turn replays that turn's
// records onto it.
type index struct {
	Entries []Entry
	Turn    int
}

func (ix *index) find(p string) (int, bool) {
	i := sort.Search(len(ix.Entries), func(i int) bool { return cmpPath(ix.Entries[i].Path, p) >= 0 })
	return i, i < len(ix.Entries) && ix.Entries[i].Path == p
}

// apply sets the entries of the changes' paths to their states after,
// keeping walk order: a few in place, many by merging, as a copy of the
// index per file command would make a turn of many quadratic.
func (ix *index) apply(changes []Change) {
	if len(changes) <= 16 {
		for _, c := range changes {
			i, ok := ix.find(c.Path)
			switch {
			case ok && c.After != nil:
				ix.Entries[i] = *c.After
			case ok:
				ix.Entries = slices.Delete(ix.Entries, i, i+1)
			case c.After != nil:
				ix.Entries = slices.Insert(ix.Entries, i, *c.After)
			}
		}
		return
	}
	sorted := slices.Clone(changes)
	slices.SortStableFunc(sorted, func(a, b Change) int { return cmpPath(a.Path, b.Path) })
	out := make([]Entry, 0, len(ix.Entries)+len(sorted))
	i := 0
	for k, c := range sorted {
		if k+1 < len(sorted) && sorted[k+1].Path == c.Path {
			continue // a later change of the same path decides
		}
		for ; i < len(ix.Entries) && cmpPath(ix.Entries[i].Path, c.Path) < 0; i++ {
			out = append(out, ix.Entries[i])
		}
		if i < len(ix.Entries) && ix.Entries[i].Path == c.Path {
			i++
		}
		if c.After != nil {
			out = append(out, *c.After)
		}
	}
	ix.Entries = append(out, ix.Entries[i:]...)
}

// save writes the index atomically and durably: opening the next turn
// trusts its turn number. Compressed, an index of 100,000 paths takes a
// few megabytes; zlib's checksum tells a damaged one.
func (ix *index) save(p string) error {
	var b bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	err := gob.NewEncoder(zw).Encode(ix)
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = atomicfile.Write(p, b.Bytes(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("save workspace index: %w", err)
	}
	return nil
}

// loadIndex reads a saved index; a missing file is an empty index.
func loadIndex(p string) (*index, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &index{}, nil
	}
	ix := &index{}
	if err == nil {
		var zr io.ReadCloser
		if zr, err = zlib.NewReader(bytes.NewReader(data)); err == nil {
			if err = gob.NewDecoder(zr).Decode(ix); err == nil {
				_, err = io.Copy(io.Discard, zr) // the checksum
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("workspace index %s: %w", p, err)
	}
	return ix, nil
}
