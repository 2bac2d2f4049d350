package edit

import (
	"bytes"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/runes"
)

// AppendNumbered appends data, a whole file held in memory, to dst as
// Numbered shows it with no range and no cut after a number of lines
// (From, To and MaxLines unset), and returns the extended slice. It
// writes the lines straight into dst, without a string per line, which
// is what a pack of thousands of files needs. On an error (ErrNotText)
// dst comes back as it was given.
func AppendNumbered(dst []byte, path string, data []byte, opts NumberOptions) ([]byte, error) {
	// Numbered's bounds on how far a line is read only bite in a file at
	// least that large: such a file, and a range, are left to it.
	if opts.From > 1 || opts.To > 0 || opts.MaxLines > 0 || len(data) >= lineLimit {
		l, err := Numbered(path, bytes.NewReader(data), opts)
		if err != nil {
			return dst, err
		}
		return append(dst, l.Text...), nil
	}
	if len(data) == 0 {
		return append(dst, pastEnd(0, 1)...), nil
	}
	total := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		total++
	}
	width := max(len(strconv.Itoa(total)), minNumberWidth)
	// Text throughout, as nearly every file is, spares a check per line;
	// otherwise a line is checked as Numbered checks it, by the part
	// shown.
	text := bytes.IndexByte(data, 0) < 0 && utf8.Valid(data)
	start := len(dst)
	// Room for every line with its number, taken at once: only cut lines'
	// notes can need more.
	dst = slices.Grow(dst, len(data)+total*(width+3))
	limit := opts.MaxLineLen
	// num is the line's number, right-aligned in width, counted up in
	// place from line to line.
	var numBuf [20]byte
	num := numBuf[:width]
	for i := range num {
		num[i] = ' '
	}
	for len(data) > 0 {
		for i := width - 1; ; i-- {
			if num[i] == '9' {
				num[i] = '0'
				continue
			}
			if num[i] == ' ' {
				num[i] = '1'
			} else {
				num[i]++
			}
			break
		}
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		dst = append(dst, num...)
		if limit > 0 && len(line) > limit {
			head, rest := line[:limit], runeCountValid(line[limit:])
			keep := runes.Whole(head)
			rest += runeCountValid(head[keep:])
			head = head[:keep]
			if !text && (bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head)) {
				return dst[:start], ErrNotText
			}
			dst = append(dst, " | "...)
			dst = append(dst, head...)
			dst = append(dst, " [... "...)
			dst = strconv.AppendInt(dst, int64(rest), 10)
			dst = append(dst, " more characters]\n"...)
			continue
		}
		if !text && (bytes.IndexByte(line, 0) >= 0 || !utf8.Valid(line)) {
			return dst[:start], ErrNotText
		}
		if k := len(line) - 1; k >= 0 && line[k] == '\r' {
			line = line[:k]
		}
		if len(line) == 0 {
			dst = append(dst, " |\n"...)
			continue
		}
		dst = append(dst, " | "...)
		dst = append(dst, line...)
		dst = append(dst, '\n')
	}
	return dst, nil
}
