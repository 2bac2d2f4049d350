package protocol

import (
	"iter"
	"path"
	"strings"
)

// Bodies are kept byte for byte, with four exceptions a person reading the
// reply would expect:
//   - A block indented as part of a Markdown list is read at its tag's
//     indentation: up to that many columns of leading blanks are removed
//     from each body line (lines with less keep what they have left).
//   - What a chat page draws around a code block, copied from the rendered
//     page with the reply, is left out at the body's edges (stripChrome).
//   - A fence wrapping the whole body (first non-blank line opens it, last
//     non-blank line closes it) is removed with the blank lines around it.
//     For a code file under a labelled fence (```python) that is all. An
//     unlabelled fence, or one around a Markdown-like file, must also be the
//     last line's match (see wrapsAll): so a README or notes.txt that starts
//     with one code block and ends with another keeps every line. A
//     Markdown-like file's wrapper must also be labelled as Markdown or
//     text, or not at all: a README.md that is one ```bash block is
//     content, not a wrapper.
//   - File content is the remaining lines, each ending in "\n"; an empty body
//     is the empty file.

// fileText turns a raw body into file content for path, and says what of
// a chat page's chrome it left out (see stripChrome).
func fileText(body string, indent int, p string) (string, string) {
	text, note := stripChrome(dedent(body, indent), fileLabels(p), false)
	return unfence(text, isMarkup(p)), note
}

// commandText is a RUN_COMMAND body: a chat page's chrome and a fence around
// it removed, blank lines around it dropped, no final newline.
func commandText(body string, indent int) (string, string) {
	text, note := stripChrome(dedent(body, indent), shellLabels, true)
	return trimBlankLines(unfence(text, false)), note
}

// plainText is a MESSAGE or DONE body without the blank lines around it.
func plainText(body string, indent int) string {
	return trimBlankLines(dedent(body, indent))
}

// trimLead cleans text written after a [MESSAGE] or [DONE] tag on its line.
func trimLead(s string) string {
	return strings.TrimSpace(strings.TrimLeft(s, ":-–— \t"))
}

// markupExts are files whose content may itself hold fenced code.
var markupExts = map[string]bool{
	".md": true, ".markdown": true, ".mdx": true, ".mdown": true, ".mkd": true,
	".rst": true, ".adoc": true, ".asciidoc": true, ".qmd": true, ".rmd": true,
}

func isMarkup(p string) bool {
	return markupExts[strings.ToLower(path.Ext(p))]
}

// markupInfos are fence labels that mean "this is the Markdown file itself".
var markupInfos = map[string]bool{
	"": true, "markdown": true, "md": true, "mdx": true, "gfm": true, "text": true,
	"txt": true, "plaintext": true, "rst": true, "restructuredtext": true,
	"adoc": true, "asciidoc": true,
}

// lineEnd returns the offset of the '\n' that ends the line of s starting
// at start, or len(s).
func lineEnd(s string, start int) int {
	if i := strings.IndexByte(s[start:], '\n'); i >= 0 {
		return start + i
	}
	return len(s)
}

// lines yields the offset of every line of s and the line, without "\n".
func lines(s string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for start := 0; start < len(s); {
			end := lineEnd(s, start)
			if !yield(start, s[start:end]) {
				return
			}
			start = end + 1
		}
	}
}

// dedent removes up to indent columns of leading blanks from each line.
func dedent(s string, indent int) string {
	if indent == 0 || s == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for start, line := range lines(s) {
		cols, i := 0, 0
		for i < len(line) && cols < indent && isBlank(line[i]) {
			if line[i] == '\t' {
				cols += 4 - cols%4
			} else {
				cols++
			}
			i++
		}
		b.WriteString(line[i:])
		if start+len(line) < len(s) {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// fence is an opening code fence: its character, length and label, and
// whether the line holds nothing after the fence characters.
type fence struct {
	ch   byte
	n    int
	info string
	bare bool
}

// openFence reads a fence line: three or more backticks or tildes,
// optionally followed by a label.
func openFence(line string) (fence, bool) {
	s := trimLine(line)
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return fence{}, false
	}
	info := strings.TrimLeft(s, s[:1])
	n := len(s) - len(info)
	if info = strings.TrimSpace(info); n < 3 || s[0] == '`' && strings.IndexByte(info, '`') >= 0 {
		return fence{}, false
	}
	bare := info == ""
	if i := strings.IndexAny(info, " \t{"); i >= 0 {
		info = info[:i]
	}
	return fence{ch: s[0], n: n, info: strings.ToLower(info), bare: bare}, true
}

// closes reports whether g, a fence line, closes f: only fence characters,
// at least as many.
func (f fence) closes(g fence) bool {
	return g.ch == f.ch && g.n >= f.n && g.bare
}

// closesLine is closes for a line not read yet.
func (f fence) closesLine(line string) bool {
	g, ok := openFence(line)
	return ok && f.closes(g)
}

// firstNonBlank returns the first line of s that is not blank and where it
// starts, or start -1 when every line is blank.
func firstNonBlank(s string) (string, int) {
	for start, line := range lines(s) {
		if !isBlankLine(line) {
			return line, start
		}
	}
	return "", -1
}

// lastNonBlank returns the last line of s that is not blank and where it
// starts, or start -1 when every line is blank. It reads s from its end.
func lastNonBlank(s string) (line string, start int) {
	end := len(s)
	if strings.HasSuffix(s, "\n") {
		end--
	}
	for end >= 0 {
		begin := strings.LastIndexByte(s[:end], '\n') + 1
		if !isBlankLine(s[begin:end]) {
			return s[begin:end], begin
		}
		end = begin - 1
	}
	return "", -1
}

// unfence removes a fence that wraps the whole of s (see the rules above).
// Only the first and last lines that are not blank are looked at, unless
// they are fence lines.
func unfence(s string, markup bool) string {
	firstLine, first := firstNonBlank(s)
	if first < 0 {
		return s
	}
	f, ok := openFence(firstLine)
	if !ok {
		return s
	}
	lastLine, lastStart := lastNonBlank(s)
	if lastStart == first {
		return s
	}
	if !f.closesLine(lastLine) {
		return s
	}
	firstEnd := first + len(firstLine)
	inner := s[firstEnd+1 : lastStart]
	switch {
	case markup && !markupInfos[f.info]:
		return s
	case f.info != "" && !markup:
		// A code file under a labelled fence: fence lines inside are the
		// code's own business.
		return inner
	case !wrapsAll(f, inner):
		return s
	}
	return inner
}

// wrapsAll reports whether the fence f, opened before inner and closed
// after it, wraps all of inner. Fence lines inside are read two ways, since
// LLMs nest fences without making them longer:
//   - after a bare opener, as CommonMark-like nesting: a labelled fence line
//     opens a nested block, a bare one closes the innermost open block, and
//     f must not be closed before the end;
//   - after an opener labelled as Markdown, which says plainly that it
//     wraps the file, inner fence lines only need to pair up among
//     themselves, the first of each pair opening a block.
func wrapsAll(f fence, inner string) bool {
	if f.info != "" {
		return innerFencesPair(inner)
	}
	stack := []fence{f}
	for _, line := range lines(inner) {
		g, isFence := openFence(line)
		switch {
		case !isFence:
		case stack[len(stack)-1].closes(g):
			if stack = stack[:len(stack)-1]; len(stack) == 0 {
				return false
			}
		default:
			stack = append(stack, g)
		}
	}
	return len(stack) == 1
}

// innerFencesPair reports whether every code block opened in s is closed.
func innerFencesPair(s string) bool {
	var open fence
	inBlock := false
	for _, line := range lines(s) {
		g, isFence := openFence(line)
		switch {
		case !isFence:
		case !inBlock:
			open, inBlock = g, true
		case open.closes(g):
			inBlock = false
		}
	}
	return !inBlock
}

// dropDanglingFence removes a last fence line that closes nothing in s:
// the end of a fence around the whole reply, caught by a final [DONE]
// without its closing tag.
func dropDanglingFence(s string) string {
	fences, lastStart, lastIsFence := 0, 0, false
	for start, line := range lines(s) {
		if isBlankLine(line) {
			continue
		}
		if _, lastIsFence = openFence(line); lastIsFence {
			fences++
		}
		lastStart = start
	}
	if lastIsFence && fences%2 == 1 {
		return s[:lastStart]
	}
	return s
}

// trimBlankLines drops blank lines at both ends and the final newline.
func trimBlankLines(s string) string {
	_, start := firstNonBlank(s)
	if start < 0 {
		return ""
	}
	last, lastStart := lastNonBlank(s)
	return s[start : lastStart+len(last)]
}
