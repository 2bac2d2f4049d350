package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// index is the workspace as the last scan saw it, in walk order, with the
// turn whose records it already holds.
type index struct {
	entries []Entry
	// turn is the last turn whose records are folded in: opening a later
	// turn replays that turn's records onto the index.
	turn int
	// stored is about how many bytes the content store takes: counted
	// up as contents are written, measured again by GC.
	stored int64
}

// find returns the position of p, or where it would go.
func (ix *index) find(p string) (int, bool) {
	i := sort.Search(len(ix.entries), func(i int) bool { return cmpPath(ix.entries[i].Path, p) >= 0 })
	return i, i < len(ix.entries) && ix.entries[i].Path == p
}

// get returns the entry of p, or nil.
func (ix *index) get(p string) *Entry {
	if i, ok := ix.find(p); ok {
		return &ix.entries[i]
	}
	return nil
}

// apply sets the entries of paths to the given states (nil removes the
// path), keeping walk order. The entries change in place: a pointer into
// them is good only until the next apply.
func (ix *index) apply(updates map[string]*Entry) {
	if len(updates) == 0 {
		return
	}
	paths := make([]string, 0, len(updates))
	for p := range updates {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return cmpPath(paths[i], paths[j]) < 0 })
	if len(paths) <= 16 {
		// A file command's few paths: changed in place, as a copy of the
		// whole index per command makes a turn of many file blocks
		// quadratic in memory.
		for _, p := range paths {
			i, ok := ix.find(p)
			e := updates[p]
			switch {
			case ok && e != nil:
				ix.entries[i] = *e
			case ok:
				ix.entries = slices.Delete(ix.entries, i, i+1)
			case e != nil:
				ix.entries = slices.Insert(ix.entries, i, *e)
			}
		}
		return
	}
	out := make([]Entry, 0, len(ix.entries)+len(paths))
	i := 0
	for _, p := range paths {
		for i < len(ix.entries) && cmpPath(ix.entries[i].Path, p) < 0 {
			out = append(out, ix.entries[i])
			i++
		}
		if i < len(ix.entries) && ix.entries[i].Path == p {
			i++
		}
		if e := updates[p]; e != nil {
			out = append(out, *e)
		}
	}
	ix.entries = append(out, ix.entries[i:]...)
}

// indexMagic starts an index file; the version follows it.
const indexMagic = "courier-snapshot-index\n"

const indexVersion = 1

// crcTable is made when first needed: making it at start-up would cost
// every courier command, most of which never check a snapshot.
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// save writes the index atomically and durably: opening the next turn
// trusts its turn number.
func (ix *index) save(path string) error {
	buf := make([]byte, 0, 64+len(ix.entries)*80)
	buf = append(buf, indexMagic...)
	buf = binary.AppendUvarint(buf, indexVersion)
	buf = binary.AppendUvarint(buf, uint64(ix.turn))
	buf = binary.AppendVarint(buf, ix.stored)
	buf = binary.AppendUvarint(buf, uint64(len(ix.entries)))
	prev := ""
	for i := range ix.entries {
		buf = appendEntry(buf, &ix.entries[i], prev)
		prev = ix.entries[i].Path
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, crcTable()))
	if err := atomicfile.Write(path, buf, 0o644); err != nil {
		return fmt.Errorf("save snapshot index: %w", err)
	}
	return nil
}

// loadIndex reads a saved index; a missing file is an empty index.
func loadIndex(path string) (*index, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &index{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot index: %w", err)
	}
	ix, err := decodeIndex(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot index %s: %w", path, err)
	}
	return ix, nil
}

func decodeIndex(data []byte) (*index, error) {
	if len(data) < len(indexMagic)+4 || !bytes.HasPrefix(data, []byte(indexMagic)) {
		return nil, errors.New("not a snapshot index")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crcTable()) != sum {
		return nil, errors.New("damaged (checksum mismatch)")
	}
	d := decoder{buf: body[len(indexMagic):]}
	if v := d.uvarint(); v != indexVersion {
		return nil, fmt.Errorf("version %d, want %d", v, indexVersion)
	}
	ix := &index{turn: int(d.uvarint()), stored: d.varint()}
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.buf)) {
		return nil, errors.New("damaged header")
	}
	ix.entries = make([]Entry, n)
	// Paths share one allocation: a large index would otherwise cost an
	// allocation per entry to load.
	var arena []byte
	ends := make([]int, n)
	prev := 0
	for i := range ix.entries {
		shared, suffix := d.pathParts()
		if shared > prev {
			return nil, errors.New("damaged path")
		}
		arena = append(arena, arena[len(arena)-prev:len(arena)-prev+shared]...)
		arena = append(arena, suffix...)
		ends[i] = len(arena)
		prev = shared + len(suffix)
		d.entryBody(&ix.entries[i])
		if d.err != nil {
			return nil, d.err
		}
	}
	all := string(arena)
	for i := range ix.entries {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		ix.entries[i].Path = all[start:ends[i]]
	}
	return ix, nil
}

// appendEntry encodes an entry, its path as the length it shares with
// prev and the rest (prev "" for a lone entry).
func appendEntry(buf []byte, e *Entry, prev string) []byte {
	shared := 0
	for shared < len(prev) && shared < len(e.Path) && prev[shared] == e.Path[shared] {
		shared++
	}
	buf = binary.AppendUvarint(buf, uint64(shared))
	buf = binary.AppendUvarint(buf, uint64(len(e.Path)-shared))
	buf = append(buf, e.Path[shared:]...)
	buf = append(buf, byte(e.Kind), e.flags)
	buf = binary.AppendUvarint(buf, uint64(e.Mode))
	buf = binary.AppendVarint(buf, e.Size)
	buf = binary.AppendVarint(buf, e.Mtime)
	buf = binary.AppendVarint(buf, e.Ctime)
	buf = binary.AppendUvarint(buf, e.Ino)
	buf = binary.AppendUvarint(buf, e.Dev)
	if e.Hashed() {
		buf = append(buf, e.Hash[:]...)
	}
	if e.Kind == Symlink {
		buf = binary.AppendUvarint(buf, uint64(len(e.Target)))
		buf = append(buf, e.Target...)
	}
	return buf
}

// decoder reads what appendEntry wrote; the first error sticks.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("damaged entry")
	}
	d.buf = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.buf)) {
		d.fail()
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) pathParts() (shared int, suffix []byte) {
	shared = int(d.uvarint())
	suffix = d.bytes(d.uvarint())
	return shared, suffix
}

// entryBody reads everything of an entry after its path.
func (d *decoder) entryBody(e *Entry) {
	kf := d.bytes(2)
	if d.err != nil {
		return
	}
	e.Kind, e.flags = Kind(kf[0]), kf[1]
	e.Mode = uint32(d.uvarint())
	e.Size = d.varint()
	e.Mtime = d.varint()
	e.Ctime = d.varint()
	e.Ino = d.uvarint()
	e.Dev = d.uvarint()
	if e.Hashed() {
		copy(e.Hash[:], d.bytes(uint64(len(e.Hash))))
	}
	if e.Kind == Symlink {
		e.Target = string(d.bytes(d.uvarint()))
	}
}

// entry reads a lone entry (written with prev "").
func (d *decoder) entry() Entry {
	var e Entry
	shared, suffix := d.pathParts()
	if shared != 0 {
		d.fail()
	}
	e.Path = string(suffix)
	d.entryBody(&e)
	return e
}
