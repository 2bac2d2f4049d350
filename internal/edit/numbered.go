package edit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runes"
)

// NumberOptions selects what Numbered shows.
// A limit of 0 is no limit.
type NumberOptions struct {
	From, To   int   // 1-based lines to show, inclusive; From 0 is 1, To 0 the last line
	MaxLines   int   // lines shown; the cut note tells how to ask for the next ones
	MaxLineLen int   // bytes of one line, so one minified line cannot fill the request
	MaxBytes   int   // bytes of the lines shown, cut as MaxLines does
	Size       int64 // the file's size, named when it is too large to count its lines
	// Words name the command that reads the next lines in the cut note
	// (nil: the lines alone).
	Words command.Words
}

// ErrNotText is returned by Numbered when a line it would show holds a NUL
// byte or bytes that are not UTF-8.
var ErrNotText = errors.New("not text")

// minNumberWidth keeps short listings aligned like long ones.
const minNumberWidth = 4

// How far Numbered reads: to the first line asked for, into one line, and
// past the lines shown to count the rest; never a whole large file.
const (
	skipLimit  = 256 << 20
	lineLimit  = 16 << 20
	countLimit = 16 << 20
)

// errLimit stops a read at the bound it was given.
var errLimit = errors.New("read limit reached")

// Listing is a file as Numbered shows it.
type Listing struct {
	Text string // the numbered lines and the notes after them
	// First and Last are the lines shown (0 when none is); Total is the
	// file's line count, -1 when it is too large to count.
	First, Last, Total int
}

// Partial reports whether the listing shows less than the whole file.
func (l Listing) Partial() bool {
	return l.First > 1 || l.Total < 0 || l.Last < l.Total
}

// Numbered renders the lines From..To of r numbered ("  12 | code"), the
// form an LLM aims line-range edits at, cut after MaxLines with a note
// naming the command that fetches the next lines. Memory follows the lines
// shown, never the file.
func Numbered(path string, r io.Reader, opts NumberOptions) (Listing, error) {
	lr := lineReader{r: bufio.NewReaderSize(r, 64<<10), stop: skipLimit}
	from := max(opts.From, 1)
	for skipped := 0; skipped < from-1; skipped++ {
		_, ok, err := lr.line(-1)
		if errors.Is(err, errLimit) {
			return Listing{Text: fmt.Sprintf("[line %d is beyond the first %s of the file%s; courier reads no further into a file]\n",
				from, human.Bytes(skipLimit), sizeNote(opts.Size)), Total: -1}, nil
		}
		if err != nil {
			return Listing{}, err
		}
		if !ok {
			return Listing{Text: pastEnd(skipped, from), Total: skipped}, nil
		}
	}
	want := -1 // lines to show; -1: to the end
	if opts.To > 0 {
		want = opts.To - from + 1
	}
	if opts.MaxLines > 0 && (want < 0 || want > opts.MaxLines) {
		want = opts.MaxLines
	}
	var shown []string
	size := 0
	endless := false // a line shown goes on past lineLimit: the rest is unknown
	for !endless && (want < 0 || len(shown) < want) && (opts.MaxBytes <= 0 || size < opts.MaxBytes) {
		lr.stop = lr.read + lineLimit
		line, ok, err := lr.line(opts.MaxLineLen)
		if errors.Is(err, errLimit) {
			endless = true
		} else if err != nil {
			return Listing{}, err
		}
		if !ok {
			break
		}
		shown = append(shown, line)
		size += len(line) + 8 // with its number
	}
	if len(shown) == 0 {
		return Listing{Text: pastEnd(from-1, from), Total: from - 1}, nil
	}
	last := from + len(shown) - 1
	// The file's line count and the last line asked for that it has; -1
	// when too large to count.
	total, to := -1, -1
	if !endless {
		n, complete, err := lr.count()
		if err != nil {
			return Listing{}, err
		}
		switch {
		case complete:
			total = last + n
			to = total
			if opts.To > 0 {
				to = min(opts.To, total)
			}
		case opts.To > 0 && last+n >= opts.To:
			to = opts.To
		}
	}
	out := numberLines(shown, from, max(to, last))
	switch {
	case to < 0:
		next := last + 1
		out += fmt.Sprintf("[... the file goes on after line %d%s%s ...]\n",
			last, sizeNote(opts.Size), opts.askFor("the next lines", path, next, next+max(opts.MaxLines, len(shown))-1))
	case last < to:
		next := last + 1
		ask := to
		if opts.MaxLines > 0 {
			ask = min(to, next+opts.MaxLines-1)
		}
		out += fmt.Sprintf("[... %s%s ...]\n", human.Count(to-last, "more line", ""), opts.askFor("them", path, next, ask))
	}
	return Listing{Text: out, First: from, Last: last, Total: total}, nil
}

// askFor tells how to request lines from..to of the file, with the front
// end's command: "; request them with [READ_FILE ...]".
func (o NumberOptions) askFor(what, path string, from, to int) string {
	if o.Words == nil {
		return ""
	}
	return fmt.Sprintf("; request %s with %s", what, o.Words.ReadLines(path, from, to))
}

// pastEnd is the note for a request starting after the last line.
func pastEnd(total, from int) string {
	if total == 0 {
		return "[empty file]\n"
	}
	return fmt.Sprintf("[the file has only %s; nothing at line %d]\n", human.Count(total, "line", ""), from)
}

// sizeNote names the file's size, when known, for a note.
func sizeNote(size int64) string {
	if size <= 0 {
		return ""
	}
	return " (" + human.Bytes(size) + " in all)"
}

// lineReader reads lines from a stream: a line ends at "\n" or at the end
// of a stream that does not end in one. It reads no further than stop.
type lineReader struct {
	r    *bufio.Reader
	read int64 // bytes read so far
	stop int64
}

// chunk reads the next piece of a line (with its "\n" when it ends there);
// bufio.ErrBufferFull means the line goes on, errLimit that it goes past
// stop.
func (lr *lineReader) chunk() ([]byte, error) {
	if lr.read >= lr.stop {
		return nil, errLimit
	}
	c, err := lr.r.ReadSlice('\n')
	lr.read += int64(len(c))
	return c, err
}

// line reads one line as it is shown: without its "\n" and a final "\r",
// cut at a character boundary after limit bytes (0: no limit, -1: none
// kept, as when skipping) with a note of the characters left out, which
// are not kept. It must be text (see ErrNotText); ok is false at the end of
// the stream. A line going on past stop is returned cut, with errLimit.
func (lr *lineReader) line(limit int) (string, bool, error) {
	var head []byte
	rest := 0 // characters after what head keeps
	cut, got := false, false
	var stopped error
	for {
		chunk, err := lr.chunk()
		if errors.Is(err, errLimit) {
			stopped, cut = err, true
			break
		}
		got = got || len(chunk) > 0
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && err != io.EOF {
			return "", false, err
		}
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		switch {
		case limit < 0:
			chunk = nil
		case limit > 0 && len(head)+len(chunk) > limit:
			room := limit - len(head)
			rest += runeCountValid(chunk[room:])
			chunk, cut = chunk[:room], true
		}
		head = append(head, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	if !got {
		return "", false, stopped
	}
	if cut {
		// A character cut at the limit counts among those left out.
		keep := runes.Whole(head)
		rest += runeCountValid(head[keep:])
		head = head[:keep]
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head) {
		return "", false, ErrNotText
	}
	switch {
	case stopped != nil:
		return fmt.Sprintf("%s [... the line goes on for more than %d characters]", head, rest), true, stopped
	case cut:
		return fmt.Sprintf("%s [... %d more characters]", head, rest), true, nil
	}
	return strings.TrimSuffix(string(head), "\r"), true, nil
}

// count counts the lines left, reading at most countLimit bytes;
// complete is false when it stopped at that bound with lines left
// uncounted.
func (lr *lineReader) count() (n int, complete bool, err error) {
	lr.stop = lr.read + countLimit
	for ; ; n++ {
		_, ok, err := lr.line(-1)
		if errors.Is(err, errLimit) {
			return n, false, nil
		}
		if err != nil || !ok {
			return n, err == nil, err
		}
	}
}

// runeCountValid counts the characters of UTF-8 text: its bytes that do
// not continue a character. Pieces of a long line can be counted apart.
func runeCountValid(p []byte) int {
	n := 0
	for _, c := range p {
		if utf8.RuneStart(c) {
			n++
		}
	}
	return n
}

// numberLines renders lines numbered from first, the numbers as wide as
// widest needs ("  12 | code", or "  12 |" for an empty line).
func numberLines(lines []string, first, widest int) string {
	width := max(len(strconv.Itoa(widest)), minNumberWidth)
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%*d |", width, first+i)
		if l != "" {
			b.WriteString(" " + l)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
