package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// packName is the file of a turn's kept contents. Each entry is a header
// line "blob <hash> <size>", the content, and a newline; entries are only
// ever appended, so one sync makes a whole run of them durable, and a
// crash can only tear the last one.
const packName = "blobs.pack"

// maxHeader bounds a header line: "blob ", 64 hex digits, a space, a size.
const maxHeader = 96

// pack is a turn's kept contents, indexed by hash.
type pack struct {
	path   string
	f      *os.File // open for appending; nil until the first save
	index  map[string]blobAt
	size   int64 // where the next entry goes
	loaded bool
	dirty  bool
}

type blobAt struct{ off, n int64 }

// load reads the entries' headers. With writable set the pack is kept open
// for appending, after a torn last entry is cut off.
func (p *pack) load(writable bool) error {
	p.index = map[string]blobAt{}
	p.loaded = true
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(p.path, flag, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	end := info.Size()
	hdr := make([]byte, maxHeader)
	for p.size < end {
		h, at, next, ok := readEntry(f, hdr, p.size, end)
		if !ok {
			break
		}
		p.index[h] = at
		p.size = next
	}
	if !writable {
		return f.Close()
	}
	if p.size < end {
		if err := f.Truncate(p.size); err != nil {
			f.Close()
			return fmt.Errorf("repair %s: %w", p.path, err)
		}
	}
	if _, err := f.Seek(p.size, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	p.f = f
	return nil
}

// readEntry reads the entry at off; ok is false for a torn or damaged one,
// which can only be the unsynced tail.
func readEntry(f *os.File, hdr []byte, off, end int64) (hash string, at blobAt, next int64, ok bool) {
	n, _ := f.ReadAt(hdr, off)
	line, _, found := bytes.Cut(hdr[:n], []byte("\n"))
	if !found {
		return "", blobAt{}, 0, false
	}
	fields := bytes.Fields(line)
	if len(fields) != 3 || string(fields[0]) != "blob" || len(fields[1]) != 64 {
		return "", blobAt{}, 0, false
	}
	size, err := strconv.ParseInt(string(fields[2]), 10, 64)
	if err != nil || size < 0 {
		return "", blobAt{}, 0, false
	}
	start := off + int64(len(line)) + 1
	next = start + size + 1
	if next > end {
		return "", blobAt{}, 0, false
	}
	nl := make([]byte, 1)
	if _, err := f.ReadAt(nl, next-1); err != nil || nl[0] != '\n' {
		return "", blobAt{}, 0, false
	}
	return string(fields[1]), blobAt{off: start, n: size}, next, true
}

func (p *pack) has(hash string) bool {
	if !p.loaded && p.load(false) != nil {
		return false
	}
	_, ok := p.index[hash]
	return ok
}

// save appends content under its hash, creating the pack if needed; a
// failed write is cut off again so later entries stay whole.
func (p *pack) save(hash string, data []byte) (created bool, err error) {
	if p.f == nil {
		if _, err := os.Stat(p.path); err == nil {
			return false, fmt.Errorf("%s is not open for writing", p.path)
		}
		if p.f, err = os.OpenFile(p.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return false, err
		}
		created = true
	}
	header := fmt.Sprintf("blob %s %d\n", hash, len(data))
	for _, part := range [][]byte{[]byte(header), data, []byte("\n")} {
		if _, err := p.f.Write(part); err != nil {
			p.f.Truncate(p.size)
			p.f.Seek(p.size, io.SeekStart)
			return created, err
		}
	}
	p.index[hash] = blobAt{off: p.size + int64(len(header)), n: int64(len(data))}
	p.size += int64(len(header)) + int64(len(data)) + 1
	p.dirty = true
	return created, nil
}

func (p *pack) read(hash string) ([]byte, error) {
	if !p.loaded {
		if err := p.load(false); err != nil {
			return nil, err
		}
	}
	at, ok := p.index[hash]
	if !ok {
		return nil, fs.ErrNotExist
	}
	f, err := os.Open(p.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, at.n)
	if _, err := f.ReadAt(data, at.off); err != nil {
		return nil, err
	}
	return data, nil
}

func (p *pack) sync() error {
	if !p.dirty {
		return nil
	}
	if err := atomicfile.Sync(p.f); err != nil {
		return fmt.Errorf("sync %s: %w", p.path, err)
	}
	p.dirty = false
	return nil
}

func (p *pack) close() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}
