package shell

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// capture keeps a bounded view of a command's output: the first runes in a
// head buffer and the last runes in a ring, so memory stays fixed however
// much the command prints. It counts runes, not bytes, and turns invalid
// UTF-8 into U+FFFD, so the kept text is always valid and never splits a
// character.
//
// capture is not safe for concurrent use; Run feeds it from one goroutine.
type capture struct {
	max      int             // characters the final text may have
	head     strings.Builder // the first headCap runes
	headN    int             // runes in head
	headCap  int
	tail     []rune // ring of the latest runes once head is full
	tailPos  int    // next slot to write in tail
	tailN    int    // runes in tail (<= len(tail))
	total    int64  // runes seen in all
	pending  []byte // an incomplete UTF-8 sequence from the end of the last Write
	pendBuff [utf8.UTFMax]byte
}

// newCapture returns a capture that keeps at most max characters.
func newCapture(max int) *capture {
	if max < 1 {
		max = 1
	}
	headCap := (max + 1) / 2
	c := &capture{max: max, headCap: headCap, tail: make([]rune, max-headCap)}
	c.pending = c.pendBuff[:0]
	return c
}

// Write implements io.Writer. It never fails.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	if len(c.pending) > 0 {
		p = c.completePending(p)
	}
	for len(p) > 0 {
		if c.headN == c.headCap {
			p = c.skipToTail(p)
		}
		if !utf8.FullRune(p) {
			c.pending = append(c.pending, p...)
			break
		}
		r, size := utf8.DecodeRune(p)
		c.add(r)
		p = p[size:]
	}
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
	c.add(r)
	c.pending = c.pending[:0]
	if size >= old {
		return p[size-old:]
	}
	// The held lead byte did not start a valid rune. The held bytes after it
	// are continuation bytes (an incomplete prefix has no others), which
	// decode as one error rune each; nothing of p was used.
	for range old - size {
		c.add(utf8.RuneError)
	}
	return p
}

// skipToTail drops the part of a long chunk that could only ever end up in
// the cut middle: it counts those runes without decoding them one by one.
// The cut happens at a byte that is not a UTF-8 continuation byte, which is a
// rune boundary however the stream before it decodes.
func (c *capture) skipToTail(p []byte) []byte {
	keep := len(c.tail)*utf8.UTFMax + utf8.UTFMax
	if len(p) <= 2*keep {
		return p
	}
	cut := len(p) - keep
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	c.total += int64(runeCount(p[:cut]))
	return p[cut:]
}

func (c *capture) add(r rune) {
	c.total++
	if c.headN < c.headCap {
		c.head.WriteRune(r)
		c.headN++
		return
	}
	if len(c.tail) == 0 {
		return
	}
	c.tail[c.tailPos] = r
	c.tailPos = (c.tailPos + 1) % len(c.tail)
	if c.tailN < len(c.tail) {
		c.tailN++
	}
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
	for range c.pending {
		c.add(utf8.RuneError)
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

// tailRunes returns the ring's runes oldest first.
func (c *capture) tailRunes() []rune {
	out := make([]rune, 0, c.tailN)
	if c.tailN < len(c.tail) {
		return append(out, c.tail[:c.tailN]...)
	}
	out = append(out, c.tail[c.tailPos:]...)
	return append(out, c.tail[:c.tailPos]...)
}

func cutNote(n int64) string {
	return fmt.Sprintf("\n... [%d characters cut] ...\n", n)
}

// runeCount is utf8.RuneCount without its conversion to string, which
// allocates a copy of large inputs.
func runeCount(p []byte) int {
	n := 0
	for i := 0; i < len(p); n++ {
		if p[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRune(p[i:])
		i += size
	}
	return n
}
