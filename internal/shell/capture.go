package shell

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/runes"
)

// capture keeps a bounded view of a command's output, so memory stays
// fixed however much it prints: the first runes and the last.
// It counts runes, one U+FFFD per invalid byte, so the kept text is valid
// UTF-8 and never splits a character. Run feeds it from one goroutine.
type capture struct {
	max     int
	head    []rune // the first (max+1)/2 runes
	tail    []rune // the latest runes after the head: the last max/2 count
	total   int64  // runes seen
	pending []byte // an incomplete UTF-8 sequence ending the last Write
}

func newCapture(limit int) *capture { return &capture{max: max(limit, 1)} }

// Write implements io.Writer. It never fails.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	if len(c.pending) > 0 {
		p = append(c.pending, p...)
	}
	cut := runes.Whole(p)
	c.pending = slices.Clone(p[cut:])
	for b := p[:cut]; len(b) > 0; {
		r, size := utf8.DecodeRune(b)
		c.add(r)
		b = b[size:]
	}
	return n, nil
}

func (c *capture) add(r rune) {
	c.total++
	if len(c.head) < (c.max+1)/2 {
		c.head = append(c.head, r)
		return
	}
	c.tail = append(c.tail, r)
	if keep := c.max / 2; len(c.tail) > 2*keep {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-keep:]...)
	}
}

// truncated reports whether some output was cut.
func (c *capture) truncated() bool {
	return c.total+int64(len(c.pending)) > int64(c.max)
}

// text returns everything when it fits, otherwise the head, a note of how
// many characters were cut, and the tail, at most max characters in all.
func (c *capture) text() string {
	for range c.pending { // output cut off inside a character
		c.add(utf8.RuneError)
	}
	c.pending = nil
	tail := c.tail[max(0, len(c.tail)-c.max/2):]
	if c.total <= int64(c.max) {
		return string(c.head) + string(tail)
	}
	// Room for the note with the largest number it could show.
	avail := c.max - utf8.RuneCountInString(cutNote(c.total))
	if avail < 2 {
		return string(c.head)
	}
	keepHead := avail / 2
	keepTail := avail - keepHead
	return string(c.head[:keepHead]) + cutNote(c.total-int64(avail)) + string(tail[len(tail)-keepTail:])
}

func cutNote(n int64) string {
	return fmt.Sprintf("\n... [%d characters cut] ...\n", n)
}
