package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the type of a path in the workspace.
type Kind uint8

// The kinds of path a snapshot tells apart.
const (
	File Kind = iota + 1
	Dir
	Symlink
	FIFO
	Socket
	Device
)

func (k Kind) String() string {
	switch k {
	case File:
		return "file"
	case Dir:
		return "folder"
	case Symlink:
		return "symlink"
	case FIFO:
		return "fifo"
	case Socket:
		return "socket"
	case Device:
		return "device"
	}
	return "nothing"
}

// Hash is the SHA-256 of a file's content.
type Hash [sha256.Size]byte

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// flag bits of an entry.
const (
	// flagIgnored marks a path the scan saw but left out of the snapshot:
	// .gitignore or a setting leaves it out, so only its presence and its
	// stat data are known.
	flagIgnored uint8 = 1 << iota
	// flagHashed says Hash holds the content's hash.
	flagHashed
	// flagStored says the content is in the object store.
	flagStored
	// flagRacy marks an entry whose timestamps were too close to the scan
	// for its stat data to prove the content unchanged next time (git's
	// "racy clean" problem): the next scan reads it again.
	flagRacy
)

// Entry is one path of the workspace as a scan saw it: git's index entry,
// with the content hash filled when the content was read.
type Entry struct {
	Path string
	// Target is a symlink's target, as written (never followed).
	Target string
	Size   int64
	// Mtime and Ctime are in nanoseconds since the epoch.
	Mtime, Ctime int64
	Ino, Dev     uint64
	// Mode holds the permission bits, setuid, setgid and sticky (07777).
	Mode  uint32
	Kind  Kind
	flags uint8
	Hash  Hash
}

// Ignored reports whether the path is outside the snapshot's scope.
func (e *Entry) Ignored() bool { return e.flags&flagIgnored != 0 }

// Hashed reports whether the content hash is known.
func (e *Entry) Hashed() bool { return e.flags&flagHashed != 0 }

// Stored reports whether the content can be restored from the store.
func (e *Entry) Stored() bool { return e.flags&flagStored != 0 }

// sameStat reports whether the stat data promise unchanged content:
// what git compares before trusting its index.
func (e *Entry) sameStat(o *Entry) bool {
	return e.Kind == o.Kind && e.Size == o.Size && e.Mtime == o.Mtime &&
		e.Ctime == o.Ctime && e.Ino == o.Ino && e.Dev == o.Dev
}

// sameState reports whether two entries are the same thing for undo:
// kind, mode, content or target. Unknown hashes fall back to stat data.
func (e *Entry) sameState(o *Entry) bool {
	if e.Kind != o.Kind || e.Mode != o.Mode {
		return false
	}
	switch e.Kind {
	case File:
		if e.Hashed() && o.Hashed() {
			return e.Hash == o.Hash
		}
		return e.sameStat(o)
	case Symlink:
		return e.Target == o.Target
	}
	return true
}

// cmpPath orders paths as a depth-first walk with sorted folder listings
// visits them: byte order, except that "/" sorts before every other byte,
// so a folder's contents come right after it.
func cmpPath(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// The workspace folder itself is the entry with the empty path, which
// sorts before every other.

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
func baseOf(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

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
