package runner

import (
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/writebehind"
)

// A request with a pack goes to its file in pieces of chunkSize bytes,
// chunks at most in memory: small enough to stay in the processor's
// cache between the goroutine that fills one and the one that writes it.
const (
	chunkSize = 256 << 10
	chunks    = 4
)

// writePacked writes request req, which has a pack, atomically to path
// as it is rendered: while the pack's files are read and numbered, a
// second goroutine writes what is ready into the file and counts its
// characters. It returns the request's text, read back from the file
// (one copy, taken from the page cache at the size the file has), and its
// tokens.
func writePacked(path string, fe frontend.FrontEnd, req frontend.Request) (string, int, error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return "", 0, err
	}
	var runes human.RuneCounter
	bw := writebehind.New(io.MultiWriter(f, &runes), chunkSize, chunks)
	err = fe.RenderTo(bw, req)
	if cerr := bw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.Abort()
		return "", 0, err
	}
	if err := f.Commit(); err != nil {
		return "", 0, err
	}
	// Read back rather than mapped: the person may open the request in an
	// editor that saves in place, and a mapped file cut shorter would
	// crash courier the next time the text is looked at.
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0, fmt.Errorf("read request back: %w", err)
	}
	// data is never changed: the string may share its bytes.
	return unsafe.String(unsafe.SliceData(data), len(data)), human.TokensOf(runes.Count()), nil
}
