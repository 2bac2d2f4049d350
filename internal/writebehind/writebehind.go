// Package writebehind writes to a writer from a goroutine of its own, so
// that making the bytes (reading and numbering a project's files) and
// writing them (copying them into a file) take two processors at once.
package writebehind

import "io"

// Writer gathers what it is given in buffers of a fixed size, and hands
// each full one to the goroutine that writes it. Close must end it.
type Writer struct {
	buf  []byte
	size int
	full chan []byte
	free chan []byte
	done chan struct{}
	err  error // the first error of w; read after done
}

// New starts a Writer to w that keeps at most n buffers of size bytes.
func New(w io.Writer, size, n int) *Writer {
	n = max(n, 2)
	bw := &Writer{size: size, full: make(chan []byte, n), free: make(chan []byte, n), done: make(chan struct{})}
	for range n {
		// Each is made when first taken.
		bw.free <- nil
	}
	go bw.run(w)
	return bw
}

func (bw *Writer) run(w io.Writer) {
	defer close(bw.done)
	for b := range bw.full {
		if bw.err == nil {
			_, bw.err = w.Write(b)
		}
		bw.free <- b[:0]
	}
}

// Write copies p into the buffers. An error of the writer is reported by
// Close.
func (bw *Writer) Write(p []byte) (int, error) {
	put(bw, p)
	return len(p), nil
}

// WriteString copies s into the buffers, as Write does.
func (bw *Writer) WriteString(s string) (int, error) {
	put(bw, s)
	return len(s), nil
}

func put[T string | []byte](bw *Writer, p T) {
	for len(p) > 0 {
		if bw.buf == nil {
			if bw.buf = <-bw.free; bw.buf == nil {
				bw.buf = make([]byte, 0, bw.size)
			}
		}
		n := copy(bw.buf[len(bw.buf):cap(bw.buf)], p)
		bw.buf = bw.buf[:len(bw.buf)+n]
		p = p[n:]
		if len(bw.buf) == cap(bw.buf) {
			bw.full <- bw.buf
			bw.buf = nil
		}
	}
}

// Close writes what is left, waits until all is written, and returns the
// writer's first error.
func (bw *Writer) Close() error {
	if len(bw.buf) > 0 {
		bw.full <- bw.buf
	}
	bw.buf = nil
	close(bw.full)
	<-bw.done
	return bw.err
}
