package snapshot

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// Small contents are kept together in pack files: as files of their own,
// a workspace of 100,000 small files would cost 100,000 blocks of disk
// and as many files to create.
//
// packs/NNNNNN.pack holds objects one after the other, each the bytes an
// object file of its own would hold (the format byte, then the content,
// compressed or not). packs/NNNNNN.idx is a record file listing them:
// per object its hash, offset and length. Records are appended to the
// index only once the pack bytes they list are synced, so whatever an
// index lists is on disk; pack bytes no index lists (a crash came first)
// are dead space, given back when GC rewrites the pack.

const (
	// packLimit is the size below which a content goes into a pack;
	// larger ones keep a file of their own, whose last block wastes
	// little next to their size.
	packLimit = 64 << 10
	// packMax is the size at which a pack is closed and the next begun,
	// so that rewriting one to give back space stays cheap.
	packMax = 64 << 20
	// packEntryCost is about what an object adds to its pack's index.
	packEntryCost = 40
)

// packed is where a packed object lies.
type packed struct {
	pack int
	off  int64
	n    int64
}

// packs is the store's packs: a table of every packed object, read from
// the indexes the first time it is needed, and the pack being written.
type packs struct {
	dir string
	mu  sync.Mutex
	// table is nil until loaded.
	table map[Hash]packed
	w     *packWriter
	// err sticks once a write failed: objects the table lists might not
	// be on disk, so nothing may claim them stored any more.
	err error
}

// packWriter appends to one pack; pending lists the objects written
// since the last commit, encoded for its index.
type packWriter struct {
	num     int
	f       *os.File
	idx     *recordFile
	size    int64
	pending []byte
	// fresh is set while the pack's and index's names are not synced.
	fresh bool
}

func (p *packs) packPath(num int) string {
	return filepath.Join(p.dir, fmt.Sprintf("%06d.pack", num))
}

func (p *packs) idxPath(num int) string {
	return filepath.Join(p.dir, fmt.Sprintf("%06d.idx", num))
}

// list returns the pack numbers that have a pack file and those that
// have an index.
func (p *packs) list() (withPack, withIdx map[int]bool, err error) {
	entries, err := os.ReadDir(p.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot packs: %w", err)
	}
	withPack, withIdx = map[int]bool{}, map[int]bool{}
	for _, e := range entries {
		name, ext, _ := strings.Cut(e.Name(), ".")
		n, err := strconv.Atoi(name)
		if err != nil || n <= 0 {
			continue
		}
		switch ext {
		case "pack":
			withPack[n] = true
		case "idx":
			withIdx[n] = true
		}
	}
	return withPack, withIdx, nil
}

// load reads the indexes into the table, once. The caller holds p.mu.
func (p *packs) load() error {
	if p.err != nil {
		return p.err
	}
	if p.table != nil {
		return nil
	}
	_, withIdx, err := p.list()
	if err != nil {
		return err
	}
	nums := make([]int, 0, len(withIdx))
	for n := range withIdx {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	table := map[Hash]packed{}
	for _, num := range nums {
		payloads, _, err := readRecords(p.idxPath(num))
		if err != nil {
			return fmt.Errorf("snapshot packs: %w", err)
		}
		for _, pl := range payloads {
			if err := decodePackEntries(pl, func(h Hash, off, n int64) {
				if _, ok := table[h]; !ok {
					table[h] = packed{pack: num, off: off, n: n}
				}
			}); err != nil {
				return fmt.Errorf("snapshot packs: %s: %w", p.idxPath(num), err)
			}
		}
	}
	p.table = table
	return nil
}

func appendPackEntry(buf []byte, h Hash, off, n int64) []byte {
	buf = append(buf, h[:]...)
	buf = binary.AppendUvarint(buf, uint64(off))
	return binary.AppendUvarint(buf, uint64(n))
}

func decodePackEntries(payload []byte, each func(h Hash, off, n int64)) error {
	d := decoder{buf: payload}
	for len(d.buf) > 0 {
		var h Hash
		copy(h[:], d.bytes(uint64(len(h))))
		off, n := d.uvarint(), d.uvarint()
		if d.err != nil || off > 1<<62 || n > 1<<62 {
			return errors.New("damaged pack index")
		}
		each(h, int64(off), int64(n))
	}
	return nil
}

// has reports whether a pack holds h (written in this process perhaps
// not synced yet: the next commit syncs it).
func (p *packs) has(h Hash) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.load() != nil {
		return false
	}
	_, ok := p.table[h]
	return ok
}

// find returns where h lies, if a pack holds it.
func (p *packs) find(h Hash) (packed, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return packed{}, false, err
	}
	at, ok := p.table[h]
	return at, ok, nil
}

// add appends an object (its format byte and content) to the pack being
// written and returns about the disk space it takes, 0 if a pack held it
// already.
func (p *packs) add(h Hash, rec []byte) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return 0, err
	}
	if _, ok := p.table[h]; ok {
		return 0, nil
	}
	if p.w != nil && p.w.size >= packMax {
		// Full: its objects are indexed now and the next pack begun.
		if err := p.commitLocked(); err != nil {
			return 0, err
		}
		p.closeWriter()
	}
	if p.w == nil {
		if err := p.openWriter(); err != nil {
			p.err = err
			return 0, err
		}
	}
	w := p.w
	if _, err := w.f.WriteAt(rec, w.size); err != nil {
		p.err = fmt.Errorf("snapshot pack: %w", err)
		return 0, p.err
	}
	p.table[h] = packed{pack: w.num, off: w.size, n: int64(len(rec))}
	w.pending = appendPackEntry(w.pending, h, w.size, int64(len(rec)))
	w.size += int64(len(rec))
	return int64(len(rec)) + packEntryCost, nil
}

// openWriter opens the newest pack to append to it, or begins a new one
// when it is full or has no index (a crash came before its first).
func (p *packs) openWriter() error {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return fmt.Errorf("snapshot packs: %w", err)
	}
	withPack, withIdx, err := p.list()
	if err != nil {
		return err
	}
	last := 0
	for n := range withPack {
		last = max(last, n)
	}
	for n := range withIdx {
		last = max(last, n)
	}
	if last > 0 && withPack[last] && withIdx[last] {
		if info, err := os.Stat(p.packPath(last)); err == nil && info.Size() < packMax {
			f, err := os.OpenFile(p.packPath(last), os.O_RDWR, 0)
			if err != nil {
				return fmt.Errorf("snapshot pack: %w", err)
			}
			// The index loses a record a crash cut short; the pack
			// bytes it listed stay as dead space after which this
			// writer appends.
			idx, _, err := openRecords(p.idxPath(last))
			if err != nil {
				f.Close()
				return err
			}
			p.w = &packWriter{num: last, f: f, idx: idx, size: info.Size()}
			return nil
		}
	}
	num := last + 1
	f, err := os.OpenFile(p.packPath(num), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("snapshot pack: %w", err)
	}
	idx, _, err := openRecords(p.idxPath(num))
	if err != nil {
		f.Close()
		return err
	}
	p.w = &packWriter{num: num, f: f, idx: idx, fresh: true}
	return nil
}

func (p *packs) closeWriter() {
	if p.w != nil {
		p.w.f.Close()
		p.w.idx.close()
		p.w = nil
	}
}

// commit makes the objects added since the last commit durable: their
// pack bytes are synced before the index lists them.
func (p *packs) commit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.commitLocked()
}

func (p *packs) commitLocked() error {
	if p.err != nil {
		return p.err
	}
	w := p.w
	if w == nil || len(w.pending) == 0 {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		p.err = fmt.Errorf("snapshot pack: sync: %w", err)
		return p.err
	}
	if err := w.idx.append(w.pending, true); err != nil {
		p.err = err
		return err
	}
	if w.fresh {
		if err := atomicfile.SyncDir(p.dir); err != nil {
			p.err = fmt.Errorf("snapshot packs: %w", err)
			return p.err
		}
		w.fresh = false
	}
	w.pending = w.pending[:0]
	return nil
}

// close commits nothing: what was added since the last commit is not
// referred to by anything durable, and a later writer appends after it.
func (p *packs) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeWriter()
}

// open returns a reader of a packed object's bytes, as an object file
// would hold them.
func (p *packs) open(at packed) (*os.File, io.Reader, error) {
	f, err := os.Open(p.packPath(at.pack))
	if err != nil {
		return nil, nil, err
	}
	return f, io.NewSectionReader(f, at.off, at.n), nil
}

// packUse is what the packs take: per pack the bytes of its file, and
// the disk space of the whole packs folder.
type packUse struct {
	bytes map[int]int64
	disk  int64
}

// use measures the packs folder and lists the size of every packed
// object.
func (p *packs) use() (packUse, map[Hash]int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return packUse{}, nil, err
	}
	u, err := p.measure()
	if err != nil {
		return packUse{}, nil, err
	}
	sizes := make(map[Hash]int64, len(p.table))
	for h, at := range p.table {
		sizes[h] = at.n
	}
	return u, sizes, nil
}

func (p *packs) measure() (packUse, error) {
	u := packUse{bytes: map[int]int64{}}
	entries, err := os.ReadDir(p.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return u, nil
	}
	if err != nil {
		return u, fmt.Errorf("snapshot packs: %w", err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile: a crash's temporary file
		}
		u.disk += onDisk(info)
		if name, ok := strings.CutSuffix(e.Name(), ".pack"); ok {
			if n, err := strconv.Atoi(name); err == nil {
				u.bytes[n] = info.Size()
			}
		}
	}
	return u, nil
}

// compact gives back the space of packed objects that are no longer
// kept: a pack where such objects (or bytes no index lists) take a
// quarter or more is rewritten with only what is kept, and a pack with
// nothing kept is removed. When the space left in the others would
// exceed room, every pack with anything to give back is rewritten. It
// returns the disk space the packs folder takes afterwards.
func (p *packs) compact(kept func(Hash) bool, room int64) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return 0, err
	}
	// What was added since the last commit is referred to by nothing
	// durable yet, but it is no garbage either: commit it first.
	if err := p.commitLocked(); err != nil {
		return 0, err
	}
	p.closeWriter()
	u, err := p.measure()
	if err != nil {
		return 0, err
	}
	live := map[int]int64{}
	byPack := map[int][]Hash{}
	for h, at := range p.table {
		if kept(h) {
			live[at.pack] += at.n
			byPack[at.pack] = append(byPack[at.pack], h)
		} else {
			delete(p.table, h)
		}
	}
	_, withIdx, err := p.list()
	if err != nil {
		return 0, err
	}
	var rewrite []int
	var slack int64
	for num, size := range u.bytes {
		dead := size - live[num]
		switch {
		case !withIdx[num] || live[num] == 0 || dead*4 >= size:
			rewrite = append(rewrite, num)
		default:
			slack += dead
		}
	}
	if slack > room {
		rewrite = rewrite[:0]
		for num, size := range u.bytes {
			if size > live[num] || !withIdx[num] {
				rewrite = append(rewrite, num)
			}
		}
	}
	// An index whose pack is gone lists nothing that can be read.
	for num := range withIdx {
		if _, ok := u.bytes[num]; !ok {
			rewrite = append(rewrite, num)
		}
	}
	sort.Ints(rewrite)
	if err := p.rewrite(rewrite, byPack); err != nil {
		return 0, err
	}
	u, err = p.measure()
	return u.disk, err
}

// rewrite copies the kept objects of the given packs into new packs,
// whose indexes are written before the old packs are removed: a crash in
// between leaves objects twice, never nowhere.
func (p *packs) rewrite(nums []int, byPack map[int][]Hash) error {
	if len(nums) == 0 {
		return nil
	}
	withPack, withIdx, err := p.list()
	if err != nil {
		return err
	}
	next := 0
	for n := range withPack {
		next = max(next, n)
	}
	for n := range withIdx {
		next = max(next, n)
	}
	var out *packOut
	finish := func() error {
		if out == nil {
			return nil
		}
		err := out.finish(p)
		out = nil
		return err
	}
	for _, num := range nums {
		hs := byPack[num]
		sort.Slice(hs, func(i, j int) bool { return p.table[hs[i]].off < p.table[hs[j]].off })
		var src *os.File
		if len(hs) > 0 {
			src, err = os.Open(p.packPath(num))
			if errors.Is(err, fs.ErrNotExist) {
				// An index whose pack is gone (removed by hand): what it
				// lists cannot be read, so it is not stored any more.
				for _, h := range hs {
					delete(p.table, h)
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("snapshot pack: %w", err)
			}
		}
		for _, h := range hs {
			at := p.table[h]
			if out != nil && out.size >= packMax {
				if err := finish(); err != nil {
					src.Close()
					return err
				}
			}
			if out == nil {
				next++
				if out, err = p.newOut(next); err != nil {
					src.Close()
					return err
				}
			}
			if err := out.copy(h, io.NewSectionReader(src, at.off, at.n), at.n); err != nil {
				src.Close()
				out.abandon()
				return err
			}
		}
		if src != nil {
			src.Close()
		}
	}
	if err := finish(); err != nil {
		return err
	}
	// The index goes first: a pack without one is dead space to the next
	// compaction, while an index without its pack would list what
	// cannot be read.
	for _, num := range nums {
		for _, path := range []string{p.idxPath(num), p.packPath(num)} {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("snapshot packs: %w", err)
			}
		}
	}
	return atomicfile.SyncDir(p.dir)
}

// packOut is a pack being written by a compaction.
type packOut struct {
	num     int
	f       *os.File
	bw      *bufio.Writer
	size    int64
	entries []byte
	moved   map[Hash]packed
}

func (p *packs) newOut(num int) (*packOut, error) {
	f, err := os.OpenFile(p.packPath(num), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("snapshot pack: %w", err)
	}
	return &packOut{num: num, f: f, bw: bufio.NewWriterSize(f, 256<<10), moved: map[Hash]packed{}}, nil
}

func (o *packOut) copy(h Hash, r io.Reader, n int64) error {
	if _, err := io.CopyN(o.bw, r, n); err != nil {
		return fmt.Errorf("snapshot pack: %w", err)
	}
	o.moved[h] = packed{pack: o.num, off: o.size, n: n}
	o.entries = appendPackEntry(o.entries, h, o.size, n)
	o.size += n
	return nil
}

// finish syncs the pack, writes its index whole, and points the table
// at the new copies.
func (o *packOut) finish(p *packs) error {
	err := o.bw.Flush()
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p.packPath(o.num))
		return fmt.Errorf("snapshot pack: %w", err)
	}
	if err := atomicfile.Write(p.idxPath(o.num), frameRecord(o.entries), 0o644); err != nil {
		return err
	}
	for h, at := range o.moved {
		p.table[h] = at
	}
	return nil
}

func (o *packOut) abandon() {
	o.f.Close()
	os.Remove(o.f.Name())
}
