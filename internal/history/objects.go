package history

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/zlib"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/human"
)

// NNNNNN.pack holds contents one after the other, each a format byte (raw
// or zlib) and the bytes; NNNNNN.idx lists them: 32 bytes of hash, offset
// and length as varints, written only once the pack is synced. Pack bytes
// no index lists (a crash came first) are dead space for compact.

const (
	packMax     = 64 << 20 // then the next pack is begun
	minCompress = 4 << 10  // below it, compressing costs more than it saves
	entryCost   = 40       // about what a content adds to its index
)

type packed struct {
	pack   int
	off, n int64
}

// objects is the content store.
type objects struct {
	dir     string
	table   map[string]packed // nil until loaded
	w       *os.File          // the pack being appended to
	wnum    int
	wsize   int64
	bw      *bufio.Writer
	pending []byte // index entries not yet synced
	disk    int64  // about the disk space taken
	err     error  // a failed write: nothing may claim content stored any more
}

func (o *objects) path(num int, ext string) string {
	return filepath.Join(o.dir, fmt.Sprintf("%06d.%s", num, ext))
}

func (o *objects) load() error {
	if o.err != nil || o.table != nil {
		return o.err
	}
	nums, disk, err := numbered(o.dir)
	if err != nil {
		return fmt.Errorf("content store: %w", err)
	}
	table := map[string]packed{}
	for _, num := range nums {
		data, rerr := os.ReadFile(o.path(num, "idx"))
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("content store: %w", rerr)
		}
		for len(data) > 32 {
			off, a := binary.Uvarint(data[32:])
			n, b := binary.Uvarint(data[32+max(a, 0):])
			if a <= 0 || b <= 0 {
				break // torn by a crash
			}
			if h := hex.EncodeToString(data[:32]); table[h].n == 0 {
				table[h] = packed{num, int64(off), int64(n)}
			}
			data = data[32+a+b:]
		}
	}
	o.table, o.disk = table, disk
	return nil
}

func (o *objects) has(h string) bool { return o.load() == nil && o.table[h].n > 0 }
func (o *objects) size() int64       { o.load(); return o.disk }

// put stores the n bytes of r under their hash h, compressed when a
// sample shows that saves a tenth; unlisted if r no longer hashes to h.
func (o *objects) put(h string, r io.ReaderAt, n int64) error {
	if err := o.load(); err != nil || o.table[h].n > 0 {
		return err
	}
	sample := make([]byte, min(n, 64<<10))
	r.ReadAt(sample, 0)
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed) // its compressor is made on the first write
	if len(sample) >= minCompress {
		zw.Write(sample)
		zw.Close()
	}
	hw := sha256.New()
	src := io.TeeReader(io.NewSectionReader(r, 0, n), hw)
	return o.add(h, false, func(w *bufio.Writer) (bool, error) {
		if z.Len() == 0 || z.Len() >= len(sample)*9/10 {
			w.WriteByte('r')
			_, err := io.Copy(w, src)
			return hex.EncodeToString(hw.Sum(nil)) == h, err // else changed while read
		}
		w.WriteByte('z')
		zw.Reset(w)
		_, err := io.Copy(zw, src)
		return hex.EncodeToString(hw.Sum(nil)) == h, cmp.Or(err, zw.Close())
	})
}

// add appends what write writes, format byte first, to the pack (a new
// one if fresh) and lists it under h if write says so.
func (o *objects) add(h string, fresh bool, write func(*bufio.Writer) (bool, error)) error {
	err := o.open(fresh)
	list := false
	if err == nil {
		o.bw.Reset(o.w)
		if list, err = write(o.bw); err == nil {
			err = o.bw.Flush()
		}
	}
	end, serr := o.w.Seek(0, io.SeekCurrent) // the pack's end: it is appended to
	if err = cmp.Or(err, serr); err != nil {
		o.err = fmt.Errorf("content store: %w", err)
		return o.err
	}
	off := o.wsize
	if o.wsize = end; list {
		o.table[h] = packed{o.wnum, off, end - off}
		raw, _ := hex.DecodeString(h)
		o.pending = binary.AppendUvarint(binary.AppendUvarint(append(o.pending, raw...), uint64(off)), uint64(end-off))
		o.disk += end - off + entryCost
	}
	return nil
}

// open opens the pack to append to: the last while it has room, unless fresh.
func (o *objects) open(fresh bool) error {
	if o.w != nil && o.wsize < packMax {
		return nil
	}
	if err := o.sync(); err != nil {
		return err
	}
	o.close()
	nums, _, err := numbered(o.dir)
	if err = cmp.Or(err, os.MkdirAll(o.dir, 0o755)); err != nil {
		return err
	}
	o.wnum = slices.Max(append(nums, 0))
	if info, err := os.Stat(o.path(o.wnum, "pack")); fresh || err != nil || info.Size() >= packMax {
		o.wnum++
	}
	if o.w, err = os.OpenFile(o.path(o.wnum, "pack"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
		o.wsize, err = o.w.Seek(0, io.SeekEnd)
	}
	return err
}

// sync makes the pack bytes durable, then the index entries, then the folder.
func (o *objects) sync() error {
	if o.err != nil || len(o.pending) == 0 {
		return o.err
	}
	err := o.w.Sync()
	if err == nil {
		var idx *os.File
		if idx, err = os.OpenFile(o.path(o.wnum, "idx"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			if _, err = idx.Write(o.pending); err == nil {
				err = idx.Sync()
			}
			idx.Close()
		}
	}
	if err == nil {
		err = atomicfile.SyncDir(o.dir)
	}
	if err != nil {
		o.err = fmt.Errorf("content store: %w", err)
		return o.err
	}
	o.pending = o.pending[:0]
	return nil
}

func (o *objects) close() { o.w.Close(); o.w = nil } // a nil *os.File's Close is an error, not a panic

func (o *objects) read(h string) (string, error) {
	var b strings.Builder
	err := o.copyTo(&b, h)
	return b.String(), err
}

// copyTo writes a content to w, failing at the end if it does not hash
// to h: damage never passes for content.
func (o *objects) copyTo(w io.Writer, h string) error {
	err := o.load()
	at, ok := o.table[h]
	if err == nil && !ok {
		err = fs.ErrNotExist
	}
	var f *os.File
	if err == nil {
		f, err = os.Open(o.path(at.pack, "pack"))
	}
	if err != nil {
		return fmt.Errorf("content %.12s: %w", h, err)
	}
	defer f.Close()
	br := bufio.NewReader(io.NewSectionReader(f, at.off, at.n))
	var r io.Reader = br
	if tag, _ := br.ReadByte(); tag == 'z' {
		r, err = zlib.NewReader(br)
	} else if tag != 'r' {
		err = errors.New("unknown format")
	}
	var got string
	if err == nil {
		got, _, err = hashOf(io.TeeReader(r, w))
	}
	if err == nil && got != h {
		err = errors.New("it does not match its hash")
	}
	if err != nil {
		return fmt.Errorf("content %.12s is damaged: %w", h, err)
	}
	return nil
}

// compact copies the live contents of each pack a quarter dead (with all,
// any) into a new pack, listed before the old goes: a crash leaves them twice.
func (o *objects) compact(live func(h string) bool, all bool) error {
	if err := cmp.Or(o.load(), o.sync()); err != nil {
		return err
	}
	o.close()
	byPack, liveBytes := map[int][]string{}, map[int]int64{}
	for h, at := range o.table {
		if live(h) {
			byPack[at.pack] = append(byPack[at.pack], h)
			liveBytes[at.pack] += at.n
		}
	}
	nums, _, err := numbered(o.dir)
	if err != nil {
		return err
	}
	var gone []int
	for _, num := range nums {
		info, err := os.Stat(o.path(num, "pack"))
		if err == nil { // else a pack removed by hand: its index goes
			if dead := info.Size() - liveBytes[num]; dead <= 0 || !all && dead*4 < info.Size() {
				continue
			}
			src, err := os.Open(o.path(num, "pack"))
			if err != nil {
				return fmt.Errorf("content store: %w", err)
			}
			for i := 0; err == nil && i < len(byPack[num]); i++ {
				at := o.table[byPack[num][i]]
				err = o.add(byPack[num][i], o.w == nil, func(w *bufio.Writer) (bool, error) {
					_, err := io.Copy(w, io.NewSectionReader(src, at.off, at.n))
					return true, err
				})
			}
			if src.Close(); err != nil {
				return err
			}
		}
		gone = append(gone, num)
	}
	if err := o.sync(); err != nil {
		return err
	}
	// The index goes first: a pack without one is dead space, an index
	// without its pack lists what cannot be read.
	for _, num := range gone {
		for _, ext := range []string{"idx", "pack"} {
			if err := os.Remove(o.path(num, ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("content store: %w", err)
			}
		}
	}
	o.table = nil
	if err := o.load(); err != nil || len(gone) == 0 {
		return err
	}
	return atomicfile.SyncDir(o.dir)
}

// GCReport says what a collection did: the turns, oldest first, that can
// no longer be undone; the disk space given back and what the contents
// take; Over: the workspace's contents and the newest turn exceed the budget.
type GCReport struct {
	Pruned      []int
	Freed, Size int64
	Over        bool
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
	n := len(seqs)
	if n == 1 {
		return fmt.Sprintf("turn %d", seqs[0])
	}
	if n > 2 && seqs[n-1]-seqs[0] == n-1 {
		return fmt.Sprintf("turns %d-%d", seqs[0], seqs[n-1])
	}
	return fmt.Sprintf("turns %s and %d", strings.ReplaceAll(strings.Trim(fmt.Sprint(seqs[:n-1]), "[]"), " ", ", "), seqs[n-1])
}

// ErrPruned is returned for a turn whose contents were dropped.
var ErrPruned = errors.New("its snapshot was dropped to stay within the snapshot budget")

func hashes(recs []Record) []string {
	var out []string
	for _, r := range recs {
		out = slices.AppendSeq(append(out, r.From, r.Base), maps.Values(r.Bodies))
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
func (h *History) GC(budget int64) (rep GCReport, err error) {
	ix, err := loadIndex(h.indexPath())
	seqs, terr := h.store.Turns(h.id)
	if err := cmp.Or(h.tidy(), err, terr, h.obj.load()); err != nil {
		return rep, err
	}
	refs := map[string]int{}
	for _, e := range ix.Entries {
		if e.stored() {
			refs[e.Hash]++
		}
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
	// What nothing refers to counts as given back: compact rewrites its
	// pack when that pays or the budget needs it.
	start := h.obj.size()
	size := start
	for x, at := range h.obj.table {
		if refs[x] == 0 {
			size -= at.n
		}
	}
	for ; len(kept) > 1 && size > budget; kept = kept[1:] {
		t := kept[0]
		if err := h.store.Mark(h.id, t.Sequence, RecordPruned); err != nil {
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
	size = h.obj.size()
	return GCReport{Pruned: rep.Pruned, Freed: max(start-size, 0), Size: size, Over: size > budget}, nil
}
