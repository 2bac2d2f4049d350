package runner

import (
	"hash/crc32"
	"io"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/writebehind"
)

// A request with a pack goes to its file in pieces of chunkSize bytes,
// chunks at most in memory: small enough to stay in the processor's
// cache between the goroutine that fills one and the one that writes it,
// and few pages of new memory (each first touch costs a fault; on a
// virtual machine, about 10 µs a page, more than copying it).
const (
	chunkSize = 64 << 10
	chunks    = 4
)

// writePacked writes request req, which has a pack, to path as it is
// rendered, under a temporary name its commit replaces (unsynced, as
// every request): while the pack's files are read and numbered, a second
// goroutine writes what is ready into the file, counts its characters and
// sums it. It returns the file, the request's size in bytes, its tokens
// and its CRC-32C: its text, which may be hundreds of megabytes, is not
// kept, and is read from the file by what needs it
// (RequestWritten.Content).
func writePacked(path string, fe frontend.FrontEnd, req frontend.Request) (*atomicfile.File, int64, int, uint32, error) {
	f, err := atomicfile.CreateUnsynced(path, 0o644)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	var runes human.RuneCounter
	sum := crc32.New(sumTable())
	bw := writebehind.New(io.MultiWriter(f, &runes, sum), chunkSize, chunks)
	err = fe.RenderTo(bw, req)
	if cerr := bw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.Abort()
		return nil, 0, 0, 0, err
	}
	return f, runes.Bytes(), human.TokensOf(runes.Count()), sum.Sum32(), nil
}
