package runner

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/workspace"
)

const (
	maxGlobFiles = 30      // the files one read of a pattern shows
	maxReadText  = 8 << 20 // the file contents one request shows: the largest context windows hold about 8 MB
	maxLine      = 1 << 40 // a span's lines, so adding to them cannot overflow
	maxLineLen   = 2000    // one minified line cannot fill a request
)

// readRoom is the bytes of file contents a request shows: the token budget
// at about four bytes a token.
func (rn *Runner) readRoom() int {
	if b := rn.cfg.Limits.TokenBudget; b > 0 {
		return min(b, maxReadText/4) * 4
	}
	return maxReadText
}

// span is lines from..end of a file that reads ask for (0: to the end),
// and to, the last line they name, which a listing's note counts to.
type span struct{ from, end, to int }

// span is the lines a read of start..end shows, read_lines applied.
func (rn *Runner) span(start, end int) span {
	s := span{from: min(max(start, 1), maxLine), to: min(max(end, 0), maxLine)}
	if s.to > 0 && s.to < s.from {
		s.to = s.from
	}
	s.end = s.to
	if n := rn.cfg.Limits.ReadLines; n > 0 && (s.end == 0 || s.end-s.from >= n) {
		s.end = s.from + n - 1
	}
	return s
}

// rest names the span's lines from line from on ("" for a whole file).
func (s span) rest(from int) string {
	switch {
	case s.to > 0:
		return command.LineRange(from, s.end)
	case from > 1:
		return command.LineRange(from, 0)
	}
	return ""
}

// merge joins the spans of one file that overlap or touch, in line order.
func merge(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if last.end != 0 && s.from > last.end+1 {
			out = append(out, s)
			continue
		}
		if last.end != 0 && (s.end == 0 || s.end > last.end) {
			last.end = s.end
		}
		if last.to != 0 && (s.to == 0 || s.to > last.to) {
			last.to = s.to
		}
	}
	return out
}

// requestedShown reads the files the LLM asked for as they are now, each
// file's reads together, each line once, within readRoom bytes. It returns
// them, the lines shown for each read (" lines 770-772"), and a note of
// what had no room.
func (rn *Runner) requestedShown(ws *workspace.Workspace, reqs []history.ReadRequest, words command.Words) ([]frontend.FileContent, []string, string) {
	type file struct {
		path, note string // note: about a pattern, shown as it is
		spans      []span
		shown      []edit.Listing // without their text
		left       int            // the first line left out for room
	}
	var files []*file
	byPath := map[string]*file{}
	add := func(p string, s span) {
		f := byPath[p]
		if f == nil {
			f = &file{path: p}
			byPath[p] = f
			files = append(files, f)
		}
		f.spans = append(f.spans, s)
	}
	for _, r := range reqs {
		if !workspace.IsGlob(r.Path) {
			add(r.Path, rn.span(r.StartLine, r.EndLine))
			continue
		}
		matches, err := ws.Glob(r.Path)
		if err != nil || len(matches) == 0 {
			files = append(files, &file{path: r.Path, note: "(no file matches this pattern now)"})
			continue
		}
		if len(matches) > maxGlobFiles {
			files = append(files, &file{path: r.Path, note: fmt.Sprintf(
				"(%d files match; the first %d are shown below. Ask for the others with narrower patterns.)", len(matches), maxGlobFiles)})
			matches = matches[:maxGlobFiles]
		}
		for _, p := range matches {
			add(p, rn.span(0, 0))
		}
	}
	var out []frontend.FileContent
	var left strings.Builder
	room := rn.readRoom()
	for _, f := range files {
		if f.note != "" {
			out = append(out, frontend.FileContent{Path: f.path, Text: f.note})
			continue
		}
		for _, s := range merge(f.spans) {
			if room <= 0 {
				f.left = cmp.Or(f.left, s.from)
				fmt.Fprintf(&left, "  %s%s\n", protocol.ShowName(f.path), s.rest(s.from))
				continue
			}
			fc, l := rn.fileContent(ws, f.path, s, room, words)
			room -= len(fc.Text) + 2*len(f.path) + 20 // with its marker lines
			out = append(out, fc)
			if l.First == 0 {
				continue
			}
			f.shown = append(f.shown, edit.Listing{First: l.First, Last: l.Last, Total: l.Total})
			// Fewer lines than asked for, with more in the file: the
			// room ran out.
			if (s.end == 0 || l.Last < s.end) && (l.Total < 0 || l.Last < l.Total) && room <= 0 {
				f.left = cmp.Or(f.left, l.Last+1)
				fmt.Fprintf(&left, "  %s%s\n", protocol.ShowName(f.path), s.rest(l.Last+1))
			}
		}
	}
	shown := make([]string, len(reqs))
	for k, r := range reqs {
		f := byPath[r.Path]
		if f == nil || workspace.IsGlob(r.Path) {
			continue
		}
		s := rn.span(r.StartLine, r.EndLine)
		for _, l := range f.shown {
			lo, hi := max(s.from, l.First), l.Last
			if s.end > 0 {
				hi = min(hi, s.end)
			}
			if lo > hi {
				continue
			}
			// A whole file shown whole keeps its result line as it is.
			if l.Partial() || r.StartLine > 0 || r.EndLine > 0 {
				shown[k] = command.LineRange(lo, hi)
			}
			break
		}
		if shown[k] == "" && f.left > 0 && (s.end == 0 || s.end >= f.left) {
			shown[k] = command.LineRange(r.StartLine, r.EndLine) + " (left out for room, see the end of the file contents)"
		}
	}
	if left.Len() == 0 {
		return out, shown, ""
	}
	why := ""
	if rn.cfg.Limits.TokenBudget > 0 {
		why = " (token_budget)"
	}
	return out, shown, fmt.Sprintf("Left out for room: the file contents above fill this request's %s for them%s. Ask again for what you still need, with %s in a later reply:\n%s",
		human.Bytes(int64(rn.readRoom())), why, words.Name(command.ReadFile), left.String())
}

// withShownRanges returns the last reply's results where each READ_FILE of
// part of a file names the lines shown rather than asked for.
func withShownRanges(results []command.Result, reqs []history.ReadRequest, shown []string) []command.Result {
	var out []command.Result
	k := 0
	for i, res := range results {
		if res.Type != command.ReadFile || !res.Success() || k >= len(reqs) || res.Path != reqs[k].Path {
			continue
		}
		r := reqs[k]
		k++
		asked := command.LineRange(r.StartLine, r.EndLine)
		if shown[k-1] == "" || shown[k-1] == asked {
			continue
		}
		sum := res.Summary
		switch quoted := "'" + r.Path + "'"; {
		case asked != "" && strings.Contains(sum, quoted+asked):
			sum = strings.Replace(sum, quoted+asked, quoted+shown[k-1], 1)
		case asked == "" && strings.Contains(sum, quoted):
			sum = strings.Replace(sum, quoted, quoted+shown[k-1], 1)
		default:
			continue
		}
		if out == nil {
			out = slices.Clone(results)
		}
		out[i].Summary = sum
	}
	if out == nil {
		return results
	}
	return out
}

// fileContent shows lines s of one requested file in about room bytes, or
// why not. Only regular files are read: a FIFO would block.
func (rn *Runner) fileContent(ws *workspace.Workspace, p string, s span, room int, words command.Words) (frontend.FileContent, edit.Listing) {
	note := func(text string) (frontend.FileContent, edit.Listing) {
		return frontend.FileContent{Path: p, Text: text}, edit.Listing{}
	}
	f, info, err := ws.OpenRegular(p)
	var notRegular *workspace.NotRegularError
	switch {
	case workspace.IsOutside(err):
		return note("(REJECTED: " + err.Error() + ")")
	case errors.Is(err, fs.ErrNotExist):
		return note("(file not found: it no longer exists)")
	case errors.As(err, &notRegular):
		return note("(not shown: " + err.Error() + "; " + words.Name(command.ReadFile) + " shows regular files only)")
	case err != nil:
		return note(fmt.Sprintf("(cannot read: %v)", err))
	}
	defer f.Close()
	l, err := edit.Numbered(p, bufio.NewReaderSize(f, 64<<10), edit.NumberOptions{From: s.from, To: s.to, MaxLines: max(s.end-s.from+1, 0), MaxLineLen: maxLineLen, MaxBytes: room, Size: info.Size(), Words: words})
	switch {
	case errors.Is(err, edit.ErrNotText):
		return note(fmt.Sprintf("(binary file, %s; not shown)", human.Count(int(info.Size()), "byte", "")))
	case err != nil:
		return note(fmt.Sprintf("(cannot read: %v)", err))
	}
	fc := frontend.FileContent{Path: p, Text: l.Text}
	if l.First > 0 && l.Partial() {
		fc.First, fc.Last, fc.Total = l.First, l.Last, l.Total
	}
	l.Text = ""
	return fc, l
}
