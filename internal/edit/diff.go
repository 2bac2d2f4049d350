package edit

import (
	"fmt"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// noNewline marks a last line without a line terminator, as diff and patch
// write it.
const noNewline = `\ No newline at end of file`

// opKind is what happens to a line in a diff.
type opKind byte

const (
	opEqual  opKind = ' '
	opDelete opKind = '-'
	opInsert opKind = '+'
)

// op is one line of an edit script: ai and bi are the line's index in old
// and new, or for a line missing from one side, the index of that side's
// next line.
type op struct {
	kind   opKind
	ai, bi int
}

// side is one version of a file as lines.
type side struct {
	lines   []string
	noFinal bool // the last line has no terminator
}

func newSide(s string) side {
	return side{lines: splitLines(s), noFinal: s != "" && !strings.HasSuffix(s, "\n")}
}

// Diff returns a unified diff of old and new with 3 lines of context, as
// diff -u writes it ("/dev/null" for an empty side, "\ No newline at end of
// file", CRs of CRLF lines not shown), cut before maxBytes (0: no limit)
// with a note of the lines left out, and the lines added and removed in
// the whole diff. Equal texts give an empty diff.
func Diff(path, old, new string, maxBytes int) (diff string, added, removed int) {
	if old == new {
		return "", 0, 0
	}
	a, b := newSide(old), newSide(new)
	ops := editScript(a, b)
	// Every line is kept, removed or added: one op each.
	common := len(a.lines) + len(b.lines) - len(ops)
	added, removed = len(b.lines)-common, len(a.lines)-common
	w := diffWriter{max: maxBytes}
	w.line("--- ", header(path, old))
	w.line("+++ ", header(path, new))
	for _, h := range hunks(ops) {
		w.hunk(ops[h[0]:h[1]], a, b)
	}
	if w.cut > 0 {
		fmt.Fprintf(&w.b, "... diff cut: %s\n", human.Count(w.cut, "more line", ""))
	}
	return w.b.String(), added, removed
}

// diffWriter writes a diff's lines until the next would pass max bytes
// (0: no limit), and counts the lines left out; the headers and the first
// @@ line are always written.
type diffWriter struct {
	b      strings.Builder
	max    int
	n, cut int // lines written, and left out
}

func (w *diffWriter) line(prefix, text string) {
	if w.cut > 0 || w.max > 0 && w.n > 2 && w.b.Len()+len(prefix)+len(text)+1 > w.max {
		w.cut++
		return
	}
	w.n++
	w.b.WriteString(prefix)
	w.b.WriteString(text)
	w.b.WriteByte('\n')
}

func header(path, text string) string {
	if text == "" {
		return "/dev/null"
	}
	return path
}

// editScript turns the common lines of a and b into a line-by-line script.
func editScript(a, b side) []op {
	ids := make(map[string]int, len(a.lines))
	ka, kb := keys(a, ids), keys(b, ids)
	ops := make([]op, 0, max(len(ka), len(kb)))
	i, j := 0, 0
	flush := func(ti, tj int) {
		for ; i < ti; i++ {
			ops = append(ops, op{opDelete, i, j})
		}
		for ; j < tj; j++ {
			ops = append(ops, op{opInsert, i, j})
		}
	}
	for _, p := range commonLines(ka, kb, len(ids)) {
		flush(p.i, p.j)
		ops = append(ops, op{opEqual, i, j})
		i, j = i+1, j+1
	}
	flush(len(ka), len(kb))
	return ops
}

// keys hashes lines to ints. An unterminated last line gets its own key, so
// that it differs from the same text with a newline, as in diff.
func keys(s side, ids map[string]int) []int {
	out := make([]int, len(s.lines))
	for i, l := range s.lines {
		if s.noFinal && i == len(s.lines)-1 {
			l += "\x00"
		}
		id, ok := ids[l]
		if !ok {
			id = len(ids)
			ids[l] = id
		}
		out[i] = id
	}
	return out
}

// hunks groups the changes of ops with their context into [start, end)
// spans of ops; changes at most twice the context apart share a hunk, as
// in diff, since their contexts would touch.
func hunks(ops []op) [][2]int {
	var out [][2]int
	for i := 0; i < len(ops); i++ {
		if ops[i].kind == opEqual {
			continue
		}
		start := max(i-diffContext, 0)
		if len(out) > 0 {
			start = max(start, out[len(out)-1][1])
		}
		last := i
		for j := i + 1; j < len(ops) && j-last <= 2*diffContext+1; j++ {
			if ops[j].kind != opEqual {
				last = j
			}
		}
		end := min(last+1+diffContext, len(ops))
		out = append(out, [2]int{start, end})
		i = end - 1
	}
	return out
}

// hunk writes one hunk: its @@ header and its lines.
func (w *diffWriter) hunk(ops []op, a, b side) {
	var oldN, newN int
	for _, o := range ops {
		if o.kind != opInsert {
			oldN++
		}
		if o.kind != opDelete {
			newN++
		}
	}
	w.line("", fmt.Sprintf("@@ -%s +%s @@", hunkRange(ops[0].ai, oldN), hunkRange(ops[0].bi, newN)))
	for _, o := range ops {
		text, s, idx := a.lines, a, o.ai
		if o.kind == opInsert {
			text, s, idx = b.lines, b, o.bi
		}
		w.line(string(o.kind), strings.TrimSuffix(text[idx], "\r"))
		if s.noFinal && idx == len(s.lines)-1 {
			w.line("", noNewline)
		}
	}
}

// hunkRange writes "start,count" the way diff does: the count is left out
// when it is 1, and an empty range names the line before it.
func hunkRange(first, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", first)
	case 1:
		return fmt.Sprint(first + 1)
	}
	return fmt.Sprintf("%d,%d", first+1, n)
}
