package runner

import (
	"bufio"
	"hash/crc32"
	"io"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runes"
)

// writePacked writes request req, which has a pack, to path as it is
// rendered, under a temporary name its commit replaces (unsynced, as
// every request), counting its characters and summing it on the way. It
// returns the file, the request's size in bytes, its tokens, its CRC-32C
// and its parts: its text, which may be a whole project, is not kept, and
// is read from the file by what needs it (RequestWritten.Content).
func writePacked(path string, fe frontend.FrontEnd, req frontend.Request) (*atomicfile.File, int64, int, uint32, []frontend.Part, error) {
	f, err := atomicfile.CreateUnsynced(path, 0o644)
	if err != nil {
		return nil, 0, 0, 0, nil, err
	}
	var count runeCounter
	sum := crc32.New(sumTable())
	w := bufio.NewWriterSize(io.MultiWriter(f, &count, sum), 64<<10)
	parts, err := fe.RenderTo(w, req)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		f.Abort()
		return nil, 0, 0, 0, nil, err
	}
	return f, count.bytes, human.TokensOf(count.n + utf8.RuneCount(count.held)), sum.Sum32(), parts, nil
}

// runeCounter counts the characters of a text written to it in pieces, as
// utf8.RuneCount counts the whole: a character cut by the end of a piece
// is held until the next.
type runeCounter struct {
	n     int
	bytes int64
	held  []byte
}

func (c *runeCounter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	n := len(p)
	if len(c.held) > 0 {
		p = append(c.held, p...)
	}
	whole := runes.Whole(p)
	c.n += utf8.RuneCount(p[:whole])
	c.held = append(c.held[:0], p[whole:]...)
	return n, nil
}
