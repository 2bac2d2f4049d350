package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/pack"
	"github.com/courier-agent/courier/internal/runes"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// maxGlobFiles caps the files one read of a pattern brings into an
// outbox, so "**/*" cannot flood the chat.
const maxGlobFiles = 30

// requested reads the files the LLM asked for, as they are now, numbered
// and cut to a sensible length.
func (rn *Runner) requested(ws *workspace.Workspace, reqs []session.ReadRequest, words command.Words) []frontend.FileContent {
	out, _ := rn.requestedShown(ws, reqs, words)
	return out
}

// requestedShown is requested, with the lines shown for each request of one
// file (" lines 770-772"; "" when none are, or for a pattern).
func (rn *Runner) requestedShown(ws *workspace.Workspace, reqs []session.ReadRequest, words command.Words) ([]frontend.FileContent, []string) {
	var out []frontend.FileContent
	shown := make([]string, len(reqs))
	seen := map[string]bool{}
	for k, r := range reqs {
		paths := []string{r.Path}
		if workspace.IsGlob(r.Path) {
			matches, err := ws.Glob(r.Path)
			if err != nil || len(matches) == 0 {
				out = append(out, frontend.FileContent{Path: r.Path, Text: "(no file matches this pattern now)"})
				continue
			}
			if len(matches) > maxGlobFiles {
				out = append(out, frontend.FileContent{Path: r.Path, Text: fmt.Sprintf(
					"(%d files match; the first %d are shown below. Ask for the others with narrower patterns.)", len(matches), maxGlobFiles)})
				matches = matches[:maxGlobFiles]
			}
			paths = matches
		}
		for _, p := range paths {
			key := fmt.Sprintf("%s:%d-%d", p, r.StartLine, r.EndLine)
			if seen[key] {
				continue
			}
			seen[key] = true
			fc, first, last := rn.fileContent(ws, p, r, words)
			// A whole file shown whole keeps its result line as it is.
			if first > 0 && !workspace.IsGlob(r.Path) && (fc.First > 0 || r.StartLine > 0 || r.EndLine > 0) {
				shown[k] = fmt.Sprintf(" lines %d-%d", first, last)
			}
			out = append(out, fc)
		}
	}
	return out, shown
}

// withShownRanges returns results, the last reply's, where each READ_FILE
// of part of a file names the lines its content shows rather than those
// asked for: a range past the end is shown as far as the file goes
// ("lines 770-772", asked for 770-900), a long file is cut. reqs are the
// reads the results queued, in order; shown what requestedShown gave.
func withShownRanges(results []command.Result, reqs []session.ReadRequest, shown []string) []command.Result {
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

// fileContent shows one requested file: numbered, streamed, read no
// further than what is shown (see edit.Numbered), or why it is not shown,
// with the lines shown (0, 0 for none). Only regular files are read: a
// named pipe, a socket or a device would block courier or never end.
func (rn *Runner) fileContent(ws *workspace.Workspace, p string, r session.ReadRequest, words command.Words) (_ frontend.FileContent, first, last int) {
	note := func(text string) frontend.FileContent { return frontend.FileContent{Path: p, Text: text} }
	f, info, err := ws.OpenRegular(p)
	var notRegular *workspace.NotRegularError
	switch {
	case workspace.IsOutside(err):
		return note("(REJECTED: " + err.Error() + ")"), 0, 0
	case errors.Is(err, fs.ErrNotExist):
		return note("(file not found: it no longer exists)"), 0, 0
	case errors.As(err, &notRegular):
		return note("(not shown: " + err.Error() + "; " + words.Name(command.ReadFile) + " shows regular files only)"), 0, 0
	case err != nil:
		return note(fmt.Sprintf("(cannot read: %v)", err)), 0, 0
	}
	defer f.Close()
	binary := note(fmt.Sprintf("(binary file, %s; not shown)", human.Count(int(info.Size()), "byte", "")))
	br := bufio.NewReaderSize(f, 64<<10)
	if head, err := br.Peek(sniffSize); (err == nil || err == io.EOF || errors.Is(err, bufio.ErrBufferFull)) && looksBinary(head) {
		return binary, 0, 0
	}
	l, err := edit.Numbered(p, br, edit.NumberOptions{From: r.StartLine, To: r.EndLine, MaxLines: rn.cfg.Limits.ReadLines, MaxLineLen: maxLineLen, Size: info.Size(), Words: words})
	switch {
	case errors.Is(err, edit.ErrNotText):
		return binary, 0, 0
	case err != nil:
		return note(fmt.Sprintf("(cannot read: %v)", err)), 0, 0
	}
	fc := note(l.Text)
	if l.First > 0 && l.Partial() {
		fc.First, fc.Last, fc.Total = l.First, l.Last, l.Total
	}
	return fc, l.First, l.Last
}

// maxLineLen cuts single lines of a shown file, so that one minified line
// cannot fill a request.
const maxLineLen = 2000

// sniffSize is how much of a file's start tells whether it is text.
const sniffSize = 8192

// looksBinary reports whether the start of a file holds a NUL byte or bytes
// that are not UTF-8 (a character cut by the end of head aside).
func looksBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	return !utf8.Valid(head[:runes.Whole(head)])
}

// findPack finds the files the person included for the first request's
// pack (see package pack).
func (rn *Runner) findPack(ws *workspace.Workspace, st *session.State, fe frontend.FrontEnd) *pack.Found {
	return pack.Find(ws, pack.Options{Include: st.Includes, Task: st.Task, MaxListed: rn.cfg.Limits.ListLimit, MaxLineLen: maxLineLen, Words: fe.Words()})
}

// pack is the first request's pack of the files found, in the room the
// rest of request req leaves within the token budget, counting about four
// bytes a token as the console's estimate does. The files are read when
// the request is written.
func (rn *Runner) pack(found *pack.Found, fe frontend.FrontEnd, req frontend.Request) *frontend.Pack {
	budget := 0
	if b := rn.cfg.Limits.TokenBudget; b > 0 {
		rest := utf8.RuneCountInString(fe.Render(req)) / 4
		// A twentieth is kept for the pack's own notes.
		budget = max(1, (b-rest)*4*19/20)
	}
	return found.Stream(budget)
}
