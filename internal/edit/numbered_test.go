package edit

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/protocol"
)

func TestNumbered(t *testing.T) {
	twelve := numberedFile(12, nil)
	tests := []struct {
		name string
		text string
		opts NumberOptions
		want string
	}{
		{
			name: "whole file",
			text: "package main\n\nfunc main() {}\n",
			want: "   1 | package main\n   2 |\n   3 | func main() {}\n",
		},
		{
			name: "range",
			text: twelve,
			opts: NumberOptions{From: 9, To: 11},
			want: "   9 | line 9\n  10 | line 10\n  11 | line 11\n",
		},
		{
			name: "to 0 reads to the end",
			text: twelve,
			opts: NumberOptions{From: 11},
			want: "  11 | line 11\n  12 | line 12\n",
		},
		{
			name: "to past the end stops at the end",
			text: "a\nb",
			opts: NumberOptions{From: 2, To: 50},
			want: "   2 | b\n",
		},
		{
			name: "cut after max lines names the next range to request",
			text: twelve,
			opts: NumberOptions{From: 2, MaxLines: 4, Words: protocol.Tags{}.Words()},
			want: "   2 | line 2\n   3 | line 3\n   4 | line 4\n   5 | line 5\n" +
				"[... 7 more lines; request them with [READ_FILE path=\"src/a.go\" lines=\"6-9\"] ...]\n",
		},
		{
			name: "cut inside a range asks for the rest of the range only",
			text: twelve,
			opts: NumberOptions{From: 1, To: 6, MaxLines: 4, Words: protocol.Tags{}.Words()},
			want: "   1 | line 1\n   2 | line 2\n   3 | line 3\n   4 | line 4\n" +
				"[... 2 more lines; request them with [READ_FILE path=\"src/a.go\" lines=\"5-6\"] ...]\n",
		},
		{
			name: "the JSON protocol's words ask a shell for the lines",
			text: twelve,
			opts: NumberOptions{From: 2, MaxLines: 4, Words: agentspaces.Chat{}.Words()},
			want: "   2 | line 2\n   3 | line 3\n   4 | line 4\n   5 | line 5\n" +
				"[... 7 more lines; request them with a shell operation running sed -n '6,9p' src/a.go ...]\n",
		},
		{
			name: "without words the cut note names no command",
			text: twelve,
			opts: NumberOptions{From: 2, MaxLines: 4},
			want: "   2 | line 2\n   3 | line 3\n   4 | line 4\n   5 | line 5\n[... 7 more lines ...]\n",
		},
		{
			name: "wide numbers widen the column",
			text: numberedFile(10000, nil),
			opts: NumberOptions{From: 9999},
			want: " 9999 | line 9999\n10000 | line 10000\n",
		},
		{
			name: "CRs are not shown",
			text: "a\r\nb\r\n",
			want: "   1 | a\n   2 | b\n",
		},
		{
			name: "long lines are cut",
			text: "short\n" + strings.Repeat("x", 30) + "é\n",
			opts: NumberOptions{MaxLineLen: 10},
			want: "   1 | short\n   2 | xxxxxxxxxx [... 21 more characters]\n",
		},
		{name: "empty file", text: "", want: "[empty file]\n"},
		{name: "start past the end", text: "a\nb\n", opts: NumberOptions{From: 5}, want: "[the file has only 2 lines; nothing at line 5]\n"},
		{name: "start past the end of one line", text: "a\n", opts: NumberOptions{From: 3}, want: "[the file has only 1 line; nothing at line 3]\n"},
		{name: "one line left", text: "a\nb\nc\n", opts: NumberOptions{MaxLines: 2}, want: "   1 | a\n   2 | b\n[... 1 more line ...]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Numbered("src/a.go", strings.NewReader(tt.text), tt.opts)
			got := l.Text
			if err != nil || got != tt.want {
				t.Errorf("got:\n%s\n%v\nwant:\n%s", got, err, tt.want)
			}
		})
	}
}

// TestNumberedRoundTrip checks that a search text copied from a listing,
// numbers and all, still applies.
func TestNumberedRoundTrip(t *testing.T) {
	listing, err := Numbered("main.go", strings.NewReader(goFile), NumberOptions{From: 2, To: 4})
	if err != nil {
		t.Fatal(err)
	}
	got, err := searchReplace(goFile, pairs(listing.Text, "\nfunc main() {\n\tx := 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(goFile, "x := 1", "x := 7", 1); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// referenceNumbered is Numbered written the simple way, over the whole text.
func referenceNumbered(path, text string, opts NumberOptions) string {
	lines := splitLines(text)
	total := len(lines)
	from, to := max(opts.From, 1), opts.To
	if to == 0 || to > total {
		to = total
	}
	switch {
	case total == 0:
		return "[empty file]\n"
	case from > total:
		if total == 1 {
			return fmt.Sprintf("[the file has only 1 line; nothing at line %d]\n", from)
		}
		return fmt.Sprintf("[the file has only %d lines; nothing at line %d]\n", total, from)
	}
	last := to
	if opts.MaxLines > 0 && to-from+1 > opts.MaxLines {
		last = from + opts.MaxLines - 1
	}
	width := max(len(fmt.Sprint(to)), minNumberWidth)
	var b strings.Builder
	for i, l := range lines[from-1 : last] {
		if opts.MaxLineLen > 0 && len(l) > opts.MaxLineLen {
			kept := strings.ToValidUTF8(l[:opts.MaxLineLen], "")
			l = fmt.Sprintf("%s [... %d more characters]", kept, utf8.RuneCountInString(l[len(kept):]))
		}
		l = strings.TrimSuffix(l, "\r")
		if l == "" {
			fmt.Fprintf(&b, "%*d |\n", width, from+i)
		} else {
			fmt.Fprintf(&b, "%*d | %s\n", width, from+i, l)
		}
	}
	if last < to {
		next := last + 1
		ask := to
		if opts.MaxLines > 0 {
			ask = min(to, next+opts.MaxLines-1)
		}
		more := fmt.Sprintf("%d more lines", to-last)
		if to-last == 1 {
			more = "1 more line"
		}
		fmt.Fprintf(&b, "[... %s; request them with [READ_FILE path=%q lines=\"%d-%d\"] ...]\n", more, path, next, ask)
	}
	return b.String()
}

// Read as a stream in pieces of any size, any text gives what the simple
// reading of the whole text gives, long lines across read buffers included.
func TestNumberedStreamMatchesReference(t *testing.T) {
	pieces := []string{"a", "b c", "\n", "\n", "\r\n", "é", "日本", "😀", "\t", strings.Repeat("x", 100), strings.Repeat("ü", 40000)}
	rng := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 1500; i++ {
		var b strings.Builder
		for n := rng.IntN(60); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		opts := NumberOptions{From: rng.IntN(8), To: rng.IntN(12), MaxLines: rng.IntN(6), MaxLineLen: rng.IntN(3) * (1 + rng.IntN(120)), Words: protocol.Tags{}.Words()}
		if opts.To > 0 && opts.To < opts.From {
			opts.To = 0 // the caller never asks for a reversed range
		}
		want := referenceNumbered("a.txt", text, opts)
		readers := []io.Reader{strings.NewReader(text), iotest.HalfReader(strings.NewReader(text)), iotest.OneByteReader(strings.NewReader(text))}
		r := readers[i%3]
		if len(text) > 4096 {
			r = readers[i%2] // byte by byte is slow, and adds nothing for long texts
		}
		l, err := Numbered("a.txt", r, opts)
		if err != nil || l.Text != want {
			t.Fatalf("text %.80q opts %+v:\ngot  %q (%v)\nwant %q", text, opts, l.Text, err, want)
		}
		// The span names the lines shown and the file's length.
		lines := len(splitLines(text))
		if l.Total != lines {
			t.Fatalf("text %.80q opts %+v: total %d, want %d", text, opts, l.Total, lines)
		}
		if shown := strings.Count(want, " | ") + strings.Count(want, " |\n"); l.First > 0 && shown > 0 && l.Last-l.First+1 > shown {
			t.Fatalf("text %.80q opts %+v: lines %d-%d shown, listing has %d", text, opts, l.First, l.Last, shown)
		}
	}
}

// endless is a file that never ends: the same line of text, forever.
type endless struct {
	off  int
	read int64
}

var endlessLine = []byte("a line of a file that goes on and on\n")

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], endlessLine[e.off:])
		e.off = (e.off + k) % len(endlessLine)
		n += k
	}
	e.read += int64(n)
	return n, nil
}

// A file larger than anything courier should read is shown by its first
// lines: Numbered stops after a bounded count of what follows.
func TestNumberedStopsEarly(t *testing.T) {
	r := &endless{}
	l, err := Numbered("huge.log", r, NumberOptions{MaxLines: 500, MaxLineLen: 2000, Size: 100 << 30, Words: protocol.Tags{}.Words()})
	got := l.Text
	if l.First != 1 || l.Last != 500 || l.Total != -1 || !l.Partial() {
		t.Errorf("span %d-%d of %d", l.First, l.Last, l.Total)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "   1 | a line of a file") || !strings.Contains(got, "\n 500 | a line of a file") {
		t.Errorf("first line: %.40q", got)
	}
	wantNote := "[... the file goes on after line 500 (100.0 GB in all); request the next lines with [READ_FILE path=\"huge.log\" lines=\"501-1000\"] ...]\n"
	if !strings.HasSuffix(got, wantNote) {
		t.Errorf("note: %q", got[len(got)-200:])
	}
	if r.read > countLimit+1<<20 {
		t.Errorf("read %d bytes for 500 lines", r.read)
	}
	// A start far into it is refused after a bounded read.
	r = &endless{}
	l, err = Numbered("huge.log", r, NumberOptions{From: 100_000_000, MaxLines: 500, Size: 100 << 30})
	got = l.Text
	if err != nil || !strings.HasPrefix(got, "[line 100000000 is beyond the first 256.0 MB of the file (100.0 GB in all)") {
		t.Errorf("got %q, %v", got, err)
	}
	if r.read > skipLimit+1<<20 {
		t.Errorf("read %d bytes to skip", r.read)
	}
}

// A single line without end is cut after a bounded read, and the file is
// said to go on.
func TestNumberedEndlessLine(t *testing.T) {
	r := &endlessX{}
	l, err := Numbered("one.min.js", r, NumberOptions{MaxLines: 500, MaxLineLen: 20, Words: protocol.Tags{}.Words()})
	got := l.Text
	want := "   1 | xxxxxxxxxxxxxxxxxxxx [... the line goes on for more than 16777196 characters]\n" +
		"[... the file goes on after line 1; request the next lines with [READ_FILE path=\"one.min.js\" lines=\"2-501\"] ...]\n"
	if err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
	if r.read > lineLimit+1<<20 {
		t.Errorf("read %d bytes", r.read)
	}
}

// endlessX is one line of x that never ends.
type endlessX struct{ read int64 }

func (e *endlessX) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.read += int64(len(p))
	return len(p), nil
}

// A line to show that is not text makes the whole file not text.
func TestNumberedRefusesBinaryLines(t *testing.T) {
	for _, text := range []string{"ok\nnul\x00here\n", "ok\nbad\xffbyte\n"} {
		if got, err := Numbered("a", strings.NewReader(text), NumberOptions{}); !errors.Is(err, ErrNotText) {
			t.Errorf("%q: got %q, %v", text, got.Text, err)
		}
	}
}
