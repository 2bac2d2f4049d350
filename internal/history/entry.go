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
	Ignored uint8 = 1 << iota // left out by .gitignore or a setting: only its stat data is known
	Stored                    // the content is in the content store
	racy                      // times too close to the scan to trust next time (git's "racy clean")
)

// Entry is a path of the workspace as courier saw it: git's index entry.
type Entry struct {
	Path   string `json:"path"`
	Kind   Kind   `json:"kind"`
	Mode   uint32 `json:"mode"` // 07777
	Size   int64  `json:"size,omitempty"`
	Mtime  int64  `json:"mtime,omitempty"` // nanoseconds
	Ctime  int64  `json:"ctime,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
	Dev    uint64 `json:"dev,omitempty"`
	Hash   string `json:"hash,omitempty"`
	Target string `json:"target,omitempty"` // a symlink's, as written (never followed)
	Flags  uint8  `json:"flags,omitempty"`
}

// MarshalJSON writes the path and target as names (see encName).
func (e Entry) MarshalJSON() ([]byte, error) {
	type plain Entry
	e.Path, e.Target = encName(e.Path), encName(e.Target)
	return json.Marshal(plain(e))
}

func (e *Entry) UnmarshalJSON(data []byte) error {
	type plain Entry
	err := json.Unmarshal(data, (*plain)(e))
	e.Path, e.Target = decName(e.Path), decName(e.Target)
	return err
}

// encName writes a file name, which may be any bytes, as a JSON string:
// as it is when UTF-8, else a NUL (which no name holds) and its base64.
func encName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return "\x00" + base64.StdEncoding.EncodeToString([]byte(s))
}

func decName(s string) string {
	b64, ok := strings.CutPrefix(s, "\x00")
	if raw, err := base64.StdEncoding.DecodeString(b64); ok && err == nil {
		return string(raw)
	}
	return s
}

func (e *Entry) ignored() bool { return e.Flags&Ignored != 0 }
func (e *Entry) stored() bool  { return e.Flags&Stored != 0 }

// sameStat: the stat data promise unchanged content, as git trusts its index.
func (e *Entry) sameStat(o *Entry) bool {
	return e.Kind == o.Kind && e.Size == o.Size && e.Mtime == o.Mtime && e.Ctime == o.Ctime && e.Ino == o.Ino && e.Dev == o.Dev
}

func (e *Entry) sameContent(o *Entry) bool {
	if e.Hash != "" && o.Hash != "" {
		return e.Hash == o.Hash
	}
	return e.sameStat(o)
}

// differ: for a path left out, only its stat data (a folder's listing) tell.
func differ(b, a *Entry) bool {
	switch {
	case b.Kind != a.Kind:
		return true
	case (b.ignored() || a.ignored()) && b.Kind == Dir:
		return b.Mtime != a.Mtime || b.Ino != a.Ino
	case b.ignored() || a.ignored():
		return !b.sameStat(a) || b.Mode != a.Mode
	case b.Mode != a.Mode:
		return true
	case b.Kind == File:
		return !b.sameContent(a)
	}
	return b.Kind == Symlink && b.Target != a.Target
}

// Change is what happened to one path, before and after (nil: absent):
// what a turn records, undo reverses, and log and diff show.
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

func (s *Skipped) UnmarshalJSON(data []byte) error {
	type plain Skipped
	err := json.Unmarshal(data, (*plain)(s))
	s.Path = decName(s.Path)
	return err
}

// Action says what happened, in words.
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

func (c *Change) modeChanged() bool {
	return c.Before != nil && c.After != nil && c.Before.Kind == c.After.Kind && c.Before.Mode != c.After.Mode
}

// Ignored reports a change at a path left out of the history: not undoable.
func (c *Change) Ignored() bool {
	return c.Before != nil && c.Before.ignored() || c.After != nil && c.After.ignored()
}

// Undoable reports whether undo can put the path back as it was.
func (c *Change) Undoable() bool {
	b := c.Before
	switch {
	case c.Ignored():
		return false
	case b == nil || b.stored():
		return true
	case b.Kind == File || b.Kind == Socket || b.Kind == Device:
		// Not stored: only its mode may have changed.
		return c.After != nil && c.After.Kind == b.Kind && (b.Kind != File || b.sameContent(c.After))
	}
	return true
}

func (c *Change) isDir() bool {
	return c.After != nil && c.After.Kind == Dir || c.Before != nil && c.Before.Kind == Dir
}

// compare lists what differs between two looks, in walk order.
func compare(before, after []Entry) []Change {
	var out []Change
	for len(before) > 0 || len(after) > 0 {
		var c Change
		if len(after) == 0 || len(before) > 0 && cmpPath(before[0].Path, after[0].Path) <= 0 {
			c.Before, before = &before[0], before[1:]
		}
		if len(after) > 0 && (c.Before == nil || c.Before.Path == after[0].Path) {
			c.After, after = &after[0], after[1:]
		}
		if c.Before == nil || c.After == nil || differ(c.Before, c.After) {
			c.Path = entryOf(&c).Path
			out = append(out, c)
		}
	}
	return out
}

// cmpPath orders paths as a sorted depth-first walk visits them: byte
// order with "/" first, so a folder's contents follow it.
func cmpPath(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	switch {
	case i == len(a) || i == len(b):
		return len(a) - len(b)
	case a[i] == '/':
		return -1
	case b[i] == '/':
		return 1
	}
	return int(a[i]) - int(b[i])
}

// isBelow reports whether p is inside folder dir ("" holds everything).
func isBelow(p, dir string) bool {
	return dir == "" && p != "" || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

func parentOf(p string) string { return p[:max(strings.LastIndexByte(p, '/'), 0)] }

// display writes a path for people and the LLM: "." for the workspace, quoted
// when it holds control characters, invalid UTF-8 or a summary's punctuation,
// so it cannot pass for other text.
func display(p string) string {
	switch {
	case p == "":
		return "."
	case !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool {
		return r < 0x20 || r == 0x7f || strings.ContainsRune(`"(,`, r) || unicode.Is(unicode.Cf, r)
	}):
		return strconv.Quote(p)
	}
	return p
}

// index is the workspace as last seen, in walk order, and the last turn
// whose records it holds: a later turn's are replayed onto it.
type index struct {
	Entries []Entry
	Turn    int
}

// apply sets the changes' paths to their states after, in walk order.
func (ix *index) apply(changes []Change) {
	sorted := slices.Clone(changes)
	slices.Reverse(sorted) // so that a later change of the same path decides
	slices.SortStableFunc(sorted, func(a, b Change) int { return cmpPath(a.Path, b.Path) })
	out, old := make([]Entry, 0, len(ix.Entries)+len(sorted)), ix.Entries
	for _, c := range slices.CompactFunc(sorted, func(a, b Change) bool { return a.Path == b.Path }) {
		i, found := slices.BinarySearchFunc(old, c.Path, func(e Entry, p string) int { return cmpPath(e.Path, p) })
		out = append(out, old[:i]...)
		if found {
			i++
		}
		if old = old[i:]; c.After != nil {
			out = append(out, *c.After)
		}
	}
	ix.Entries = append(out, old...)
}

// save writes the index atomically and durably (the next turn trusts its
// turn number); zlib's checksum tells a damaged one.
func (ix *index) save(p string) error {
	var b bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	gob.NewEncoder(zw).Encode(ix) // into memory: cannot fail
	zw.Close()
	if err := atomicfile.Write(p, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("save workspace index: %w", err)
	}
	return nil
}

// loadIndex reads a saved index; a missing file is an empty index.
func loadIndex(p string) (*index, error) {
	ix := &index{}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return ix, nil
	}
	var zr io.ReadCloser
	if err == nil {
		zr, err = zlib.NewReader(bytes.NewReader(data))
	}
	if err == nil {
		err = gob.NewDecoder(zr).Decode(ix)
	}
	if err == nil {
		_, err = io.Copy(io.Discard, zr) // the checksum
	}
	if err != nil {
		return nil, fmt.Errorf("workspace index %s: %w", p, err)
	}
	return ix, nil
}
