package shell

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/runes"
)

// capture keeps a bounded view of a command's output: the first runes in a
// head buffer and the last bytes in a ring, so memory stays fixed however
// much the command prints. It counts runes, not bytes, and turns invalid
// UTF-8 into U+FFFD, so the kept text is always valid and never splits a
// character.
//
// Once the head is full, output is only counted and copied into the ring,
// never decoded rune by rune: UTF-8 decoding resynchronises at every byte
// that is not a continuation byte (an invalid byte decodes alone, as one
// U+FFFD), so pieces of the stream cut at such bytes can be counted on
// their own and the ring decoded from such a byte at the end.
//
// capture is not safe for concurrent use; Run feeds it from one goroutine.
type capture struct {
	max     int             // characters the final text may have
	head    strings.Builder // the first headCap runes
	headN   int             // runes in head
	headCap int
	tailCap int    // runes the tail may contribute
	ring    []byte // the latest bytes after the head, a ring
	ringPos int    // next slot to write in ring
	ringN   int    // bytes in ring (<= len(ring))
	total   int64  // runes seen in all
	// pending is an incomplete UTF-8 sequence from the end of the last
	// Write, not yet counted.
	pending  []byte
	pendBuff [utf8.UTFMax]byte
}

// newCapture returns a capture that keeps at most max characters.
func newCapture(max int) *capture {
	if max < 1 {
		max = 1
	}
	headCap := (max + 1) / 2
	tailCap := max - headCap
	// Every rune takes at most UTFMax bytes, and decoding the ring starts
	// at most UTFMax bytes in, so this many bytes always hold tailCap runes.
	c := &capture{max: max, headCap: headCap, tailCap: tailCap, ring: make([]byte, (tailCap+1)*utf8.UTFMax)}
	c.pending = c.pendBuff[:0]
	return c
}

// Write implements io.Writer. It never fails.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	if len(c.pending) > 0 {
		p = c.completePending(p)
	}
	for len(p) > 0 && c.headN < c.headCap {
		if !utf8.FullRune(p) {
			c.pending = append(c.pending, p...)
			return n, nil
		}
		r, size := utf8.DecodeRune(p)
		c.add(r, p[:size])
		p = p[size:]
	}
	if len(p) == 0 {
		return n, nil
	}
	// The head is full: hold back an incomplete sequence at the end, count
	// the rest and keep its last bytes.
	cut := runes.Whole(p)
	c.total += int64(runes.Count(p[:cut]))
	c.keep(p[:cut])
	c.pending = append(c.pending, p[cut:]...)
	return n, nil
}

// completePending joins the bytes held back from the previous Write with the
// start of p, decodes the rune they form (or error runes), and returns the
// part of p not consumed.
func (c *capture) completePending(p []byte) []byte {
	old := len(c.pending)
	for taken := 0; taken < len(p) && len(c.pending) < utf8.UTFMax && !utf8.FullRune(c.pending); taken++ {
		c.pending = append(c.pending, p[taken])
	}
	if !utf8.FullRune(c.pending) {
		return nil // still incomplete, and all of p is held in pending
	}
	r, size := utf8.DecodeRune(c.pending)
	c.add(r, c.pending[:size])
	if size >= old {
		c.pending = c.pending[:0]
		return p[size-old:]
	}
	// The held lead byte did not start a valid rune. The held bytes after it
	// are continuation bytes (an incomplete prefix has no others), which
	// decode as one error rune each; nothing of p was used.
	for i := size; i < old; i++ {
		c.add(utf8.RuneError, c.pending[i:i+1])
	}
	c.pending = c.pending[:0]
	return p
}

// add counts one decoded rune whose bytes were b: into the head while it
// has room, into the ring after.
func (c *capture) add(r rune, b []byte) {
	c.total++
	if c.headN < c.headCap {
		c.head.WriteRune(r)
		c.headN++
		return
	}
	c.keep(b)
}

// keep copies the last bytes of p into the ring.
func (c *capture) keep(p []byte) {
	if len(p) >= len(c.ring) {
		copy(c.ring, p[len(p)-len(c.ring):])
		c.ringPos, c.ringN = 0, len(c.ring)
		return
	}
	k := copy(c.ring[c.ringPos:], p)
	copy(c.ring, p[k:])
	c.ringPos = (c.ringPos + len(p)) % len(c.ring)
	c.ringN = min(c.ringN+len(p), len(c.ring))
}

// truncated reports whether some output was cut.
func (c *capture) truncated() bool {
	return c.total+int64(len(c.pending)) > int64(c.max)
}

// text returns the kept text: everything when it fits, otherwise the head,
// a note of how many characters were cut, and the tail, at most max
// characters in all.
func (c *capture) text() string {
	// A trailing incomplete sequence is invalid output: one error rune each.
	for i := range c.pending {
		c.add(utf8.RuneError, c.pending[i:i+1])
	}
	c.pending = c.pending[:0]
	tail := c.tailRunes()
	if !c.truncated() {
		return c.head.String() + string(tail)
	}
	// Reserve room for the note with the largest number it could show.
	noteLen := utf8.RuneCountInString(cutNote(c.total))
	avail := c.max - noteLen
	if avail < 2 {
		return string([]rune(c.head.String())[:min(c.max, c.headN)])
	}
	keepHead := min(avail/2, c.headN)
	keepTail := min(avail-keepHead, len(tail))
	head := []rune(c.head.String())[:keepHead]
	tail = tail[len(tail)-keepTail:]
	cut := c.total - int64(keepHead) - int64(keepTail)
	return string(head) + cutNote(cut) + string(tail)
}

// tailRunes decodes the ring, oldest first, and returns at most its last
// tailCap runes. A ring that has wrapped is decoded from its first byte
// that is a rune boundary however the stream before it decoded.
func (c *capture) tailRunes() []rune {
	b := make([]byte, 0, c.ringN)
	if c.ringN < len(c.ring) {
		b = append(b, c.ring[:c.ringN]...)
	} else {
		b = append(b, c.ring[c.ringPos:]...)
		b = append(b, c.ring[:c.ringPos]...)
		start := 0
		for start < utf8.UTFMax && start < len(b) && !utf8.RuneStart(b[start]) {
			start++
		}
		b = b[start:]
	}
	runes := []rune(string(b))
	return runes[max(0, len(runes)-c.tailCap):]
}

func cutNote(n int64) string {
	return fmt.Sprintf("\n... [%d characters cut] ...\n", n)
}
