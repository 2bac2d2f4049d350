package snapshot

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// An object file starts with one byte telling how the content follows.
const (
	objRaw  = 'r'
	objZlib = 'z'
)

// sampleSize is how much of a content is compressed to decide whether
// compressing all of it pays.
const sampleSize = 64 << 10

// minCompress is the smallest content compressed: below it, setting the
// compressor up again costs about 15 µs whatever the size, more than
// storing the content takes, for a few hundred bytes saved in a pack
// (and none in a file of its own, which takes a block anyway).
const minCompress = 4 << 10

// objects is the content-addressed store: each distinct content once,
// under its SHA-256, compressed when that saves at least a tenth. A
// content smaller than packLimit goes into a pack; a larger one is a
// file of its own in dir, written to a temporary file and renamed, so a
// reader never sees half of one. (Stores made before packs hold every
// content as a file; those files are read as ever.) Nothing is synced
// object by object: barrier syncs them all before anything durable
// refers to them.
// Its methods are safe for concurrent use.
type objects struct {
	dir   string
	packs *packs
	dirty atomic.Bool
	// scratches keeps compressors from one call to the next: a file
	// command's refresh would otherwise set one up for each file.
	scratches sync.Pool
}

// scratch returns a scratch for one goroutine; release gives it back.
func (o *objects) scratch() *scratch {
	if x, ok := o.scratches.Get().(*scratch); ok {
		return x
	}
	return new(scratch)
}

func (o *objects) release(x *scratch) { o.scratches.Put(x) }

func (o *objects) path(h Hash) string {
	s := h.String()
	return filepath.Join(o.dir, s[:2], s[2:])
}

func (o *objects) has(h Hash) bool {
	if o.packs.has(h) {
		return true
	}
	_, err := os.Lstat(o.path(h))
	return err == nil
}

// scratch is what one goroutine reuses from content to content: a
// compressor is most of a megabyte to set up.
type scratch struct {
	buf  bytes.Buffer
	zw   *zlib.Writer
	data []byte
}

func (sc *scratch) compressor(w io.Writer) *zlib.Writer {
	if sc.zw == nil {
		sc.zw, _ = zlib.NewWriterLevel(w, zlib.BestSpeed)
	} else {
		sc.zw.Reset(w)
	}
	return sc.zw
}

// compresses tells from a sample whether compressing pays.
func (sc *scratch) compresses(sample []byte) bool {
	if len(sample) < 128 {
		return false
	}
	sc.buf.Reset()
	zw := sc.compressor(&sc.buf)
	zw.Write(sample)
	zw.Close()
	return sc.buf.Len() < len(sample)*9/10
}

// putBytes stores content already in memory under its hash h and returns
// the disk space it takes (0 when it was there already).
func (o *objects) putBytes(h Hash, data []byte, sc *scratch) (int64, error) {
	if o.has(h) {
		return 0, nil
	}
	buf := &sc.buf
	buf.Reset()
	tag := byte(objRaw)
	if len(data) >= minCompress {
		buf.WriteByte(objZlib)
		zw := sc.compressor(buf)
		zw.Write(data)
		zw.Close()
		if buf.Len() < len(data)*9/10 {
			tag = objZlib
		}
	}
	if tag == objRaw {
		buf.Reset()
		buf.WriteByte(objRaw)
		buf.Write(data)
	}
	if len(data) < packLimit {
		return o.packs.add(h, buf.Bytes())
	}
	return o.commit(h, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

// putStream stores a content too large to hold in memory, hashing it as
// it is written, and returns its hash and the disk space it takes.
func (o *objects) putStream(r io.Reader, sc *scratch) (Hash, int64, error) {
	var h Hash
	br := bufio.NewReaderSize(r, sampleSize)
	sample, err := br.Peek(sampleSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return h, 0, err
	}
	compress := sc.compresses(sample)
	tmp, err := o.temp()
	if err != nil {
		return h, 0, err
	}
	defer os.Remove(tmp.Name())
	hw := sha256.New()
	bw := bufio.NewWriterSize(tmp, sampleSize)
	var dst io.Writer = bw
	var zw *zlib.Writer
	if compress {
		bw.WriteByte(objZlib)
		zw = sc.compressor(bw)
		dst = zw
	} else {
		bw.WriteByte(objRaw)
	}
	if _, err := io.Copy(io.MultiWriter(dst, hw), br); err != nil {
		tmp.Close()
		return h, 0, err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			tmp.Close()
			return h, 0, err
		}
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return h, 0, err
	}
	info, err := tmp.Stat()
	if err == nil {
		err = tmp.Close()
	} else {
		tmp.Close()
	}
	if err != nil {
		return h, 0, err
	}
	copy(h[:], hw.Sum(nil))
	if o.has(h) {
		return h, 0, nil
	}
	if err := o.place(tmp.Name(), h); err != nil {
		return h, 0, err
	}
	return h, onDisk(info), nil
}

func (o *objects) temp() (*os.File, error) {
	f, err := os.CreateTemp(o.dir, atomicfile.TempPrefix+"object-*")
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return nil, fmt.Errorf("snapshot store: %w", err)
		}
		f, err = os.CreateTemp(o.dir, atomicfile.TempPrefix+"object-*")
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	return f, nil
}

// commit writes an object through a temporary file.
func (o *objects) commit(h Hash, write func(io.Writer) error) (int64, error) {
	tmp, err := o.temp()
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	info, serr := tmp.Stat()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = serr
	}
	if err != nil {
		return 0, fmt.Errorf("snapshot store: %w", err)
	}
	if err := o.place(tmp.Name(), h); err != nil {
		return 0, err
	}
	return onDisk(info), nil
}

// place renames a finished temporary file to the object's name.
func (o *objects) place(tmp string, h Hash) error {
	p := o.path(h)
	err := os.Rename(tmp, p)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("snapshot store: %w", err)
		}
		err = os.Rename(tmp, p)
	}
	if err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	o.dirty.Store(true)
	return nil
}

// open returns a reader of an object's content that fails at the end if
// the content does not hash to h, so damage never passes for content.
func (o *objects) open(h Hash) (io.ReadCloser, error) {
	at, ok, err := o.packs.find(h)
	if err != nil {
		return nil, fmt.Errorf("snapshot of content %s: %w", h.String()[:12], err)
	}
	var f *os.File
	var src io.Reader
	bufSize := 16 << 10
	if ok {
		f, src, err = o.packs.open(at)
		bufSize = int(min(at.n, int64(bufSize)))
	} else {
		f, err = os.Open(o.path(h))
		src = f
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot of content %s: %w", h.String()[:12], err)
	}
	br := bufio.NewReaderSize(src, bufSize)
	tag, err := br.ReadByte()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot of content %s: damaged: %w", h.String()[:12], err)
	}
	var r io.Reader = br
	switch tag {
	case objRaw:
	case objZlib:
		zr, err := zlib.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("snapshot of content %s: damaged: %w", h.String()[:12], err)
		}
		r = zr
	default:
		f.Close()
		return nil, fmt.Errorf("snapshot of content %s: damaged: unknown format", h.String()[:12])
	}
	return &verifier{r: r, f: f, want: h, h: sha256.New()}, nil
}

// read returns an object's whole content.
func (o *objects) read(h Hash) ([]byte, error) {
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
	want Hash
	h    interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if errors.Is(err, io.EOF) {
		var got Hash
		copy(got[:], v.h.Sum(nil))
		if got != v.want {
			return n, fmt.Errorf("snapshot of content %s: damaged: content does not match its hash", v.want.String()[:12])
		}
	}
	return n, err
}

func (v *verifier) Close() error { return v.f.Close() }

// barrier makes the objects written since the last barrier durable.
func (o *objects) barrier() error {
	if o.dirty.Swap(false) {
		if err := syncFS(o.dir); err != nil {
			return err
		}
	}
	return o.packs.commit()
}
