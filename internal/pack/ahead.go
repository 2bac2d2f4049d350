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
	// batches bounds the batches read ahead.
	batches = 3
	// bigs bounds the files larger than batchSize held at once, each in a
	// buffer made for the largest: two, so that the next is read while
	// one is numbered, unless the largest is larger than oneBig. The
	// memory held stays within batches buffers and two of the largest
	// file, about what reading one file at a time and numbering it holds.
	bigs   = 2
	oneBig = 8 << 20
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
	// big is set when data is a buffer of its own, to be handed back
	// once the file is packed.
	big bool
}

// ahead is what the packer and the goroutine reading ahead hand each
// other: batches, empty (pool) or read (ready), and the buffers of the
// large files (big).
type ahead struct {
	pool, ready chan *batch
	big         chan []byte
	stop, done  chan struct{}
}

// runAhead packs the candidates in order, as try does one after the
// other, with their content read ahead; the files found generated are
// left in p.deferred. The reader has p.opener and p.buf until runAhead
// returns.
func (p *packer) runAhead(add func(frontend.FileContent)) {
	a := ahead{
		pool:  make(chan *batch, batches),
		ready: make(chan *batch, batches),
		big:   make(chan []byte, bigs),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	for range batches {
		a.pool <- &batch{buf: make([]byte, 0, batchSize)}
	}
	n := bigs
	for _, c := range p.cands {
		// Any file, also those beyond what largest counts (maxOutGuess).
		if !c.secret && c.size > oneBig {
			n = 1
			break
		}
	}
	for range n {
		// Each is made when first taken, for the largest file.
		a.big <- nil
	}
	go p.readAhead(a)
	// Even if add panics, the reader is not left blocked.
	defer func() {
		close(a.stop)
		<-a.done
		// A large file's buffer serves the files packed after these (see
		// try): memory first touched costs more than the copy into it.
		// Those still in batches not packed (add panicked) are left.
		for {
			select {
			case b := <-a.big:
				if cap(b) > cap(p.buf) {
					p.buf = b
				}
				continue
			default:
			}
			break
		}
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
				a.pool <- b
			}
			b, next = <-a.ready, 0
		}
		f := b.files[next]
		b.files[next] = fetched{}
		next++
		p.place(c, f.data, f.err, true, add)
		if f.big {
			a.big <- f.data[:0]
		}
	}
}

// readAhead reads p's candidates, but the secret ones, in order into
// batches from a.pool and large files' buffers from a.big, and hands them
// to a.ready, until all are read or a.stop is closed.
func (p *packer) readAhead(a ahead) {
	defer close(a.done)
	var b *batch
	take := func() bool {
		select {
		case b = <-a.pool:
			b.buf, b.files = b.buf[:0], b.files[:0]
			return true
		case <-a.stop:
			return false
		}
	}
	send := func() bool {
		select {
		case a.ready <- b:
			b = nil
			return true
		case <-a.stop:
			return false
		}
	}
	for _, c := range p.cands {
		if c.secret {
			continue
		}
		if c.size >= batchSize {
			// Alone, in a batch of its own.
			if b != nil && !send() {
				return
			}
			var big []byte
			select {
			case big = <-a.big:
			case <-a.stop:
				return
			}
			if big == nil {
				big = make([]byte, 0, p.largest()+1)
			}
			data, err := read(p.opener, c, big)
			if !take() {
				a.big <- data[:0]
				return
			}
			b.files = append(b.files, fetched{data, err, true})
			if !send() {
				a.big <- data[:0]
				return
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
		b.files = append(b.files, fetched{data: data, err: err})
	}
	if b != nil {
		send()
	}
}
