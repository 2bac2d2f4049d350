package edit

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// NumberOptions selects what Numbered shows.
type NumberOptions struct {
	// From and To are the 1-based first and last lines to show, inclusive;
	// From 0 means 1, To 0 means the last line.
	From, To int
	// MaxLines cuts the listing after this many lines (0: no cut). The cut
	// note tells the LLM how to ask for the next lines.
	MaxLines int
	// MaxLineLen cuts single lines longer than this many bytes (0: no cut),
	// so one minified line cannot fill the request.
	MaxLineLen int
}

// minNumberWidth keeps short listings aligned like long ones.
const minNumberWidth = 4

// Numbered renders text with right-aligned line numbers ("  12 | code"), the
// form an LLM needs to aim line-range edits. It shows lines From..To, cuts
// after MaxLines with a note naming the READ_FILE that fetches the next
// lines, and says so when the range is empty or past the end.
func Numbered(path, text string, opts NumberOptions) string {
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
		return fmt.Sprintf("[the file has only %d lines; nothing at line %d]\n", total, from)
	case from > to:
		return fmt.Sprintf("[no lines: %d is after %d]\n", from, to)
	}
	last := to
	if opts.MaxLines > 0 && to-from+1 > opts.MaxLines {
		last = from + opts.MaxLines - 1
	}
	shown := lines[from-1 : last]
	if opts.MaxLineLen > 0 {
		shown = cutLongLines(shown, opts.MaxLineLen)
	}
	out := numberLines(shown, from, to)
	if last < to {
		next := last + 1
		ask := to
		if opts.MaxLines > 0 {
			ask = min(to, next+opts.MaxLines-1)
		}
		out += fmt.Sprintf("[... %d more lines; request them with [READ_FILE path=%q lines=\"%d-%d\"] ...]\n", to-last, path, next, ask)
	}
	return out
}

// numberLines renders lines numbered from first, the numbers as wide as
// widest needs, each line ending in a newline; CRs are not shown.
func numberLines(lines []string, first, widest int) string {
	width := max(len(fmt.Sprint(widest)), minNumberWidth)
	var b strings.Builder
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if l == "" {
			fmt.Fprintf(&b, "%*d |\n", width, first+i)
			continue
		}
		fmt.Fprintf(&b, "%*d | %s\n", width, first+i, l)
	}
	return b.String()
}

// cutLongLines shortens lines over limit bytes, saying how much was cut.
func cutLongLines(lines []string, limit int) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) <= limit {
			out[i] = l
			continue
		}
		kept := strings.ToValidUTF8(l[:limit], "")
		out[i] = fmt.Sprintf("%s [... %d more characters]", kept, utf8.RuneCountInString(l[len(kept):]))
	}
	return out
}
