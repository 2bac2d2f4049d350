package history

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
	"syscall"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// The content store keeps each content once, under its hash, in pack
// files: NNNNNN.pack holds contents one after the other, each a format
// byte (raw or zlib) and the bytes; NNNNNN.idx lists them, 32 bytes of
// hash and the offset and length as varints each. Entries are added to an
// index only once the pack bytes they list are synced, so whatever an
// index lists is on disk; pack bytes no index lists (a crash came first)
// are dead space, given back when compact rewrites the pack. An index
// whose last entry a crash tore is read up to it.

const (
	packMax     = 64 << 20 // a pack this large is closed and the next begun
	minCompress = 4 << 10  // below it, compressing costs more than it saves
	objRaw      = 'r'
	objZlib     = 'z'
)

type packed struct {
	pack  int
	off   int64
	n     int64
	inIdx bool
}

// objects is the content store. Its methods are safe for concurrent use.
type objects struct {
	dir   string
	mu    sync.Mutex
	table map[string]packed // nil until loaded
	w     *os.File          // the pack being appended to
	wnum  int
	wsize int64
	dirty bool     // pack bytes written since the last sync
	fresh []string // hashes written since the last sync
	disk  int64    // about the disk space taken
	err   error    // a failed write: nothing may claim content stored any more
}

func (o *objects) packPath(num int, ext string) string {
	return filepath.Join(o.dir, fmt.Sprintf("%06d.%s", num, ext))
}

// load reads the indexes once. The caller holds o.mu.
func (o *objects) load() error {
	if o.err != nil || o.table != nil {
		return o.err
	}
	nums, err := o.packs()
	if err != nil {
		return err
	}
	table := map[string]packed{}
	for _, num := range nums {
		data, err := os.ReadFile(o.packPath(num, "idx"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("content store: %w", err)
		}
		for len(data) > 32 {
			h := hex.EncodeToString(data[:32])
			off, a := binary.Uvarint(data[32:])
			n, b := binary.Uvarint(data[32+max(a, 0):])
			if a <= 0 || b <= 0 {
				break // torn by a crash
			}
			data = data[32+a+b:]
			if _, ok := table[h]; !ok {
				table[h] = packed{pack: num, off: int64(off), n: int64(n), inIdx: true}
			}
		}
	}
	o.table = table
	o.disk, err = o.measure()
	return err
}

// packs lists the numbers of the packs and indexes in the store.
func (o *objects) packs() ([]int, error) {
	entries, err := os.ReadDir(o.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("content store: %w", err)
	}
	var nums []int
	for _, e := range entries {
		name, _, _ := strings.Cut(e.Name(), ".")
		if n, err := strconv.Atoi(name); err == nil && n > 0 && (len(nums) == 0 || nums[len(nums)-1] != n) {
			nums = append(nums, n)
		}
	}
	return nums, nil
}

// measure is the disk space the store takes, as du counts it.
func (o *objects) measure() (int64, error) {
	entries, err := os.ReadDir(o.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("content store: %w", err)
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			// The blocks it takes, as du counts them.
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += int64(st.Blocks) * 512
			} else {
				n += (info.Size() + 4095) &^ 4095
			}
		}
	}
	return n, nil
}

func (o *objects) has(h string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.load() != nil {
		return false
	}
	_, ok := o.table[h]
	return ok
}

// size is about the disk space the store takes.
func (o *objects) size() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.load()
	return o.disk
}

// encode is a content as a pack holds it: compressed when that saves a
// tenth.
func encode(data []byte) []byte {
	if len(data) >= minCompress {
		var b bytes.Buffer
		b.WriteByte(objZlib)
		zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
		zw.Write(data)
		zw.Close()
		if b.Len() < len(data)*9/10 {
			return b.Bytes()
		}
	}
	return append([]byte{objRaw}, data...)
}

// put stores a content under its hash h and returns the disk space it
// adds (0 when it was there).
func (o *objects) put(h string, data []byte) (int64, error) {
	if o.has(h) {
		return 0, nil
	}
	rec := encode(data)
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.table[h]; ok {
		return 0, nil
	}
	if err := o.append(h, rec); err != nil {
		o.err = err
		return 0, err
	}
	return int64(len(rec)) + 40, nil
}

// append writes an encoded content at the end of the pack being written.
// The caller holds o.mu.
func (o *objects) append(h string, rec []byte) error {
	off, err := o.writer()
	if err == nil {
		_, err = o.w.Write(rec)
	}
	if err != nil {
		return fmt.Errorf("content store: %w", err)
	}
	o.added(h, off, int64(len(rec)))
	return nil
}

// writer opens the pack to append to, beginning a new one when the last
// is full, and returns where the next content goes. The caller holds o.mu.
func (o *objects) writer() (int64, error) {
	if o.w != nil && o.wsize >= packMax {
		if err := o.syncLocked(); err != nil {
			return 0, err
		}
		o.w.Close()
		o.w = nil
	}
	if o.w != nil {
		return o.wsize, nil
	}
	nums, err := o.packs()
	if err == nil {
		err = os.MkdirAll(o.dir, 0o755)
	}
	if err != nil {
		return 0, err
	}
	o.wnum = 1
	if len(nums) > 0 {
		o.wnum = nums[len(nums)-1]
		if info, err := os.Stat(o.packPath(o.wnum, "pack")); err != nil || info.Size() >= packMax {
			o.wnum++
		}
	}
	if o.w, err = os.OpenFile(o.packPath(o.wnum, "pack"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
		return 0, err
	}
	info, err := o.w.Stat()
	if err != nil {
		o.w.Close()
		o.w = nil
		return 0, err
	}
	o.wsize = info.Size()
	return o.wsize, nil
}

// added lists a content written at off. The caller holds o.mu.
func (o *objects) added(h string, off, n int64) {
	o.table[h] = packed{pack: o.wnum, off: off, n: n}
	o.fresh = append(o.fresh, h)
	o.wsize = off + n
	o.disk += n + 40
	o.dirty = true
}

// putFile stores a file's content too large to hold in memory: it is
// read once to hash it and, if the store lacks it, again into the pack.
// It returns the hash (of what was read the first time), whether the
// content is stored (not when the file changed in between: what was
// written is then dead space), and the disk space added.
func (o *objects) putFile(f *os.File, size int64) (h string, stored bool, written int64, err error) {
	hw := sha256.New()
	if _, err := io.Copy(hw, io.NewSectionReader(f, 0, size)); err != nil {
		return "", false, 0, err
	}
	h = hex.EncodeToString(hw.Sum(nil))
	sample := make([]byte, min(size, 64<<10))
	if o.has(h) {
		return h, true, 0, nil
	}
	if _, err := f.ReadAt(sample, 0); err != nil {
		return h, false, 0, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.table[h]; ok {
		return h, true, 0, nil
	}
	off, err := o.writer()
	if err != nil {
		o.err = fmt.Errorf("content store: %w", err)
		return h, false, 0, o.err
	}
	hw.Reset()
	bw := bufio.NewWriterSize(o.w, 256<<10)
	src := io.TeeReader(io.NewSectionReader(f, 0, size), hw)
	if encode(sample)[0] == objZlib {
		bw.WriteByte(objZlib)
		zw, _ := zlib.NewWriterLevel(bw, zlib.BestSpeed)
		if _, err = io.Copy(zw, src); err == nil {
			err = zw.Close()
		}
	} else {
		bw.WriteByte(objRaw)
		_, err = io.Copy(bw, src)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	info, serr := o.w.Stat()
	if err == nil {
		err = serr
	}
	if err != nil {
		o.err = fmt.Errorf("content store: %w", err)
		return h, false, 0, o.err
	}
	if hex.EncodeToString(hw.Sum(nil)) != h {
		o.wsize = info.Size()
		return h, false, 0, nil
	}
	o.added(h, off, info.Size()-off)
	return h, true, info.Size() - off + 40, nil
}

// open returns a reader of a content that fails at the end if the content
// does not hash to h, so damage never passes for content.
func (o *objects) open(h string) (io.ReadCloser, error) {
	o.mu.Lock()
	err := o.load()
	at, ok := o.table[h]
	o.mu.Unlock()
	if err == nil && !ok {
		err = fs.ErrNotExist
	}
	var f *os.File
	if err == nil {
		f, err = os.Open(o.packPath(at.pack, "pack"))
	}
	if err != nil {
		return nil, fmt.Errorf("content %.12s: %w", h, err)
	}
	br := bufio.NewReader(io.NewSectionReader(f, at.off, at.n))
	tag, _ := br.ReadByte()
	var r io.Reader = br
	if tag == objZlib {
		r, err = zlib.NewReader(br)
	} else if tag != objRaw {
		err = errors.New("unknown format")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("content %.12s is damaged: %w", h, err)
	}
	return &verifier{r: r, f: f, want: h, h: sha256.New()}, nil
}

// read returns a whole content.
func (o *objects) read(h string) ([]byte, error) {
	r, err := o.open(h)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

type verifier struct {
	r    io.Reader
	f    *os.File
	want string
	h    interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if errors.Is(err, io.EOF) && hex.EncodeToString(v.h.Sum(nil)) != v.want {
		return n, fmt.Errorf("content %.12s is damaged: it does not match its hash", v.want)
	}
	return n, err
}

func (v *verifier) Close() error { return v.f.Close() }

// sync makes the contents written so far durable: the pack bytes, then
// the index entries that list them.
func (o *objects) sync() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.syncLocked()
}

func (o *objects) syncLocked() error {
	if o.err != nil {
		return o.err
	}
	if !o.dirty {
		return nil
	}
	var entries []byte
	for _, h := range o.fresh {
		at := o.table[h]
		if at.inIdx {
			continue
		}
		entries = appendEntry(entries, h, at)
		at.inIdx = true
		o.table[h] = at
	}
	err := o.w.Sync()
	if err == nil {
		err = appendSync(o.packPath(o.wnum, "idx"), entries)
	}
	if err == nil {
		err = atomicfile.SyncDir(o.dir)
	}
	if err != nil {
		o.err = fmt.Errorf("content store: %w", err)
		return o.err
	}
	o.fresh, o.dirty = o.fresh[:0], false
	return nil
}

func appendEntry(buf []byte, h string, at packed) []byte {
	raw, _ := hex.DecodeString(h)
	buf = append(buf, raw...)
	buf = binary.AppendUvarint(buf, uint64(at.off))
	return binary.AppendUvarint(buf, uint64(at.n))
}

// appendSync appends data to a file durably.
func appendSync(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// close ends the pack being written; what was added since the last sync is
// referred to by nothing durable, and a later writer appends after it.
func (o *objects) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.w != nil {
		o.w.Close()
		o.w = nil
	}
}

// sizes returns the bytes each content takes in its pack.
func (o *objects) sizes() (map[string]int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.load(); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(o.table))
	for h, at := range o.table {
		out[h] = at.n
	}
	return out, nil
}

// compact gives back the space of the contents live does not want: a pack
// where they (or bytes no index lists) take a quarter or more, or with
// all set any of it, is rewritten with what is live, into a new pack whose
// index is written before the old pack and index are removed: a crash in
// between leaves contents twice, never nowhere.
func (o *objects) compact(live func(h string) bool, all bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.load(); err != nil {
		return err
	}
	if err := o.syncLocked(); err != nil {
		return err
	}
	if o.w != nil {
		o.w.Close()
		o.w = nil
	}
	byPack := map[int][]string{}
	liveBytes := map[int]int64{}
	for h, at := range o.table {
		if live(h) {
			byPack[at.pack] = append(byPack[at.pack], h)
			liveBytes[at.pack] += at.n
		} else {
			delete(o.table, h)
		}
	}
	nums, err := o.packs()
	if err != nil || len(nums) == 0 {
		return err
	}
	next := nums[len(nums)-1]
	for _, num := range nums {
		info, err := os.Stat(o.packPath(num, "pack"))
		if err != nil {
			// A pack gone (removed by hand): what its index lists cannot
			// be read, so it is not stored any more.
			for _, h := range byPack[num] {
				delete(o.table, h)
			}
			byPack[num] = nil
		}
		size := int64(0)
		if err == nil {
			size = info.Size()
		}
		dead := size - liveBytes[num]
		if err != nil {
			dead = 1
		}
		if dead == 0 || (!all && dead*4 < size && liveBytes[num] > 0) {
			continue
		}
		next++
		if err := o.rewrite(num, next, byPack[num]); err != nil {
			return err
		}
	}
	o.disk, err = o.measure()
	return err
}

// rewrite copies the contents hs of pack num into a new pack next.
func (o *objects) rewrite(num, next int, hs []string) error {
	sort.Slice(hs, func(i, j int) bool { return o.table[hs[i]].off < o.table[hs[j]].off })
	if len(hs) > 0 {
		src, err := os.Open(o.packPath(num, "pack"))
		if err != nil {
			return fmt.Errorf("content store: %w", err)
		}
		defer src.Close()
		dst, err := atomicfile.Create(o.packPath(next, "pack"), 0o644)
		if err != nil {
			return err
		}
		moved := map[string]packed{}
		var idx []byte
		off := int64(0)
		for _, h := range hs {
			at := o.table[h]
			if _, err := io.Copy(dst, io.NewSectionReader(src, at.off, at.n)); err != nil {
				dst.Abort()
				return fmt.Errorf("content store: %w", err)
			}
			moved[h] = packed{pack: next, off: off, n: at.n, inIdx: true}
			idx = appendEntry(idx, h, moved[h])
			off += at.n
		}
		if err := dst.Commit(); err != nil {
			return err
		}
		if err := atomicfile.Write(o.packPath(next, "idx"), idx, 0o644); err != nil {
			return err
		}
		for h, at := range moved {
			o.table[h] = at
		}
	}
	// The index goes first: a pack without one is dead space to the next
	// compaction, while an index without its pack would list what cannot
	// be read.
	for _, ext := range []string{"idx", "pack"} {
		if err := os.Remove(o.packPath(num, ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("content store: %w", err)
		}
	}
	return atomicfile.SyncDir(o.dir)
}
