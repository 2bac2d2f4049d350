package pack

import (
	"unsafe"

	"github.com/courier-agent/courier/internal/frontend"
)

// Without a budget every file is read whatever came before it, so a
// goroutine reads the next files while the last are numbered and
// written: the two take a processor each. The files go over in batches,
// a batch's small files read one after the other into one buffer, so
// that the goroutines wake each other once a batch, not once a file.
const (
	// batchSize is the room of a batch's buffer; a file larger than it
	// goes alone, in a buffer of its own. Small, since each page of a
	// buffer is new memory the first time it is filled.
	batchSize = 64 << 10
	// batches bounds the batches read ahead. A file larger than batchSize
	// is read only when no other batch is held: the memory held at once
	// stays within batches buffers and the largest file, about what
	// reading one file at a time holds.
	batches = 3
)

// batch is files read ahead, in the order of the candidates but the
// secret ones.
type batch struct {
	buf   []byte // the content of the small files, one after the other
	files []fetched
}

// fetched is a file read ahead: its content, or why it could not be read.
type fetched struct {
	data []byte
	err  error
}

// runAhead packs the candidates in order, as try does one after the
// other, with their content read ahead; the files found generated are
// left in p.deferred. The reader has p.opener and p.buf until runAhead
// returns.
func (p *packer) runAhead(add func(frontend.FileContent)) {
	pool := make(chan *batch, batches)
	for range batches {
		pool <- &batch{buf: make([]byte, 0, batchSize)}
	}
	ready := make(chan *batch, batches)
	stop := make(chan struct{})
	done := make(chan struct{})
	go p.readAhead(pool, ready, stop, done)
	// Even if add panics, the reader is not left blocked.
	defer func() {
		close(stop)
		<-done
	}()
	var b *batch
	next := 0 // b's next file
	for _, c := range p.cands {
		if c.secret {
			p.try(c, true, add)
			continue
		}
		for b == nil || next == len(b.files) {
			if b != nil {
				pool <- b
			}
			b, next = <-ready, 0
		}
		f := b.files[next]
		// Not held once packed: it may be a large file's own buffer.
		b.files[next] = fetched{}
		next++
		p.place(c, f.data, f.err, true, add)
	}
}

// readAhead reads p's candidates, but the secret ones, in order into
// batches from pool and hands them to ready, until all are read or stop
// is closed.
func (p *packer) readAhead(pool chan *batch, ready chan<- *batch, stop <-chan struct{}, done chan<- struct{}) {
	var b *batch
	// big is the buffer files larger than a batch are read into, one at a
	// time: when the next one is read, every batch is back, so the last
	// one's content is no longer used. It is p.buf, handed back for the
	// files packed after these (see try): memory first touched costs more
	// than the copy into it.
	big := p.buf
	defer func() {
		p.buf = big
		close(done)
	}()
	take := func() bool {
		select {
		case b = <-pool:
			b.buf, b.files = b.buf[:0], b.files[:0]
			return true
		case <-stop:
			return false
		}
	}
	send := func() bool {
		select {
		case ready <- b:
			b = nil
			return true
		case <-stop:
			return false
		}
	}
	for _, c := range p.cands {
		if c.secret {
			continue
		}
		if c.size >= batchSize {
			// Alone, once every batch but the one it goes in is back.
			if b != nil && !send() {
				return
			}
			var held []*batch
			for len(held) < batches {
				if !take() {
					return
				}
				held = append(held, b)
			}
			b, held = held[0], held[1:]
			if big == nil {
				// Made once for the largest: files come smallest first, and
				// growing file by file would leave a trail of buffers.
				big = make([]byte, 0, p.largest()+1)
			}
			data, err := read(p.opener, c, big)
			big = data[:0]
			b.files = append(b.files, fetched{data, err})
			if !send() {
				return
			}
			for _, h := range held {
				pool <- h
			}
			continue
		}
		if b != nil && int64(cap(b.buf)-len(b.buf)) <= c.size {
			if !send() {
				return
			}
		}
		if b == nil && !take() {
			return
		}
		tail := b.buf[len(b.buf):]
		data, err := read(p.opener, c, tail)
		if err == nil && unsafe.SliceData(data) == unsafe.SliceData(tail) {
			// Read into the batch's buffer (not into one of its own, for
			// a file grown since it was found).
			b.buf = b.buf[:len(b.buf)+len(data)]
		}
		b.files = append(b.files, fetched{data, err})
	}
	if b != nil {
		send()
	}
}
