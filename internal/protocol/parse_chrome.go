package protocol

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/command"
)

// A reply selected on the rendered chat page and copied, rather than copied
// with the page's button, has lost its code fences and brought along what
// the page draws around each code block: a header with the language and a
// copy button's label, a footer some pages add. Those lines are left out
// at the edges of a block's body only where they cannot be its content: a
// header that holds a button's label, a footer by its fixed words, and a
// language label alone when it names the block's own language (the file's,
// or a shell's for a RUN_COMMAND) or when the footer shows a page that puts
// it there. Something of the body always stays, and the command's result
// says what was left out.

// chrome is what one page draws over or under a code block, as copying
// gives it: lines compared without case, blank lines between them allowed;
// "%" stands for a language label, or at a line's start or end for a label
// or nothing. head is what the page of a footer draws over the code
// instead of a button.
type chrome struct {
	lines []string
	head  string
}

var chromeHeads = []chrome{
	{lines: []string{"%", "copy code"}},    // ChatGPT
	{lines: []string{"%", "copy", "edit"}}, // ChatGPT since 2025
	{lines: []string{"%", "copy"}},         // Copilot, documentation pages
	{lines: []string{"%copy code"}},        // ChatGPT without a language, or the header's parts joined
	{lines: []string{"copy", "edit"}},      // ChatGPT without a language, since 2025
}

var chromeFeet = []chrome{
	{lines: []string{"ignore_when_copying_start", "content_copy", "download", "use code with caution.", "%", "ignore_when_copying_end"},
		head: "generated %"}, // Google AI Studio
	{lines: []string{"use code with caution.", "%"}},                  // Gemini: the language under the code
	{lines: []string{"use code with caution.%"}},                      // the same joined, or Gemini without it
	{lines: []string{"use code with caution. learn more"}, head: "%"}, // Bard
}

// langLabels are the labels pages show over code in a file's language, by
// its extension or name. Markdown and text files have none: a word alone
// on their first line may well be content.
var langLabels = map[string]string{
	".go": "go golang", ".py": "python py python3", ".sh": "bash sh shell zsh shellscript",
	".bash": "bash sh shell", ".zsh": "zsh sh shell", ".js": "javascript js", ".mjs": "javascript js",
	".cjs": "javascript js", ".ts": "typescript ts", ".tsx": "tsx typescript", ".jsx": "jsx javascript",
	".json": "json", ".yaml": "yaml yml", ".yml": "yaml yml", ".toml": "toml", ".html": "html",
	".css": "css", ".c": "c", ".h": "c cpp", ".cpp": "cpp c++", ".cc": "cpp c++", ".java": "java",
	".rs": "rust rs", ".rb": "ruby rb", ".php": "php", ".sql": "sql", ".cs": "csharp c# cs",
	".kt": "kotlin", ".swift": "swift", "Dockerfile": "dockerfile docker", "Makefile": "makefile make",
}

// shellLabels are a RUN_COMMAND's labels: a shell's name alone on its first
// line would start a shell with no input, which does nothing.
const shellLabels = "bash sh shell zsh console shellscript"

// fileLabels are the language labels of the file at p.
func fileLabels(p string) string { return cmp.Or(langLabels[path.Ext(p)], langLabels[path.Base(p)]) }

// isLabel reports a language label as pages show it: "python", "C#",
// "objective-c".
func isLabel(s string) bool {
	if s == "" || len(s) > 20 || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && (c < '0' || c > '9') && strings.IndexByte("+#-_.", c) < 0 {
			return false
		}
	}
	return true
}

// hasLabel reports whether labels, words, hold s.
func hasLabel(labels, s string) bool {
	return slices.ContainsFunc(strings.Fields(labels), func(l string) bool { return strings.EqualFold(l, s) })
}

// matchChrome reports whether a trimmed line is the chrome line pattern,
// whose "%" is at its start or end.
func matchChrome(pattern, line string) bool {
	var pre, post string
	switch {
	case pattern[0] == '%':
		post = pattern[1:]
	case pattern[len(pattern)-1] == '%':
		pre = pattern[:len(pattern)-1]
	default:
		return strings.EqualFold(line, pattern)
	}
	if len(line) < len(pre)+len(post) || !strings.EqualFold(line[:len(pre)], pre) ||
		!strings.EqualFold(line[len(line)-len(post):], post) {
		return false
	}
	mid := line[len(pre) : len(line)-len(post)]
	return mid == "" || isLabel(mid)
}

// edge is a line of a body that is not blank: its trimmed text, where it
// starts and where the line after it starts.
type edge struct {
	text       string
	start, end int
}

// edges appends to dst up to n lines of body that are not blank, from its
// start, or from its end backwards.
func edges(dst []edge, body string, n int, fromEnd bool) []edge {
	for from, to := 0, len(body); len(dst) < n; {
		var line string
		var start int
		if fromEnd {
			line, start = lastNonBlank(body[:to])
		} else {
			line, start = firstNonBlank(body[from:])
			start += from
		}
		if start < from {
			break
		}
		end := min(start+len(line)+1, len(body))
		dst = append(dst, edge{trimLine(line), start, end})
		from, to = end, start
		if fromEnd {
			from = 0
		}
	}
	return dst
}

// matchEdge returns the first of patterns that fits the first lines (or
// the last), or -1.
func matchEdge(patterns []chrome, lines []edge, fromEnd bool) int {
	return slices.IndexFunc(patterns, func(p chrome) bool {
		if len(p.lines) > len(lines) {
			return false
		}
		at := lines[:len(p.lines)]
		if fromEnd {
			at = lines[len(lines)-len(p.lines):]
		}
		for i, pat := range p.lines {
			if !matchChrome(pat, at[i].text) {
				return false
			}
		}
		return true
	})
}

// stripChrome leaves out the chat page's lines at the edges of body, a
// block's body whose language labels are labels (run: a RUN_COMMAND's),
// and says what it left out ("" for nothing).
func stripChrome(body, labels string, run bool) (string, string) {
	if !maybeChrome(body) {
		return body, ""
	}
	var hb, fb [6]edge
	head := edges(hb[:0], body, 3, false)
	if len(head) == 0 {
		return body, ""
	}
	feet := edges(fb[:0], body, 6, true)
	slices.Reverse(feet)
	nh, nf := 0, 0
	if k := matchEdge(chromeHeads, head, false); k >= 0 {
		nh = len(chromeHeads[k].lines)
	}
	k := matchEdge(chromeFeet, feet, true)
	if k >= 0 {
		nf = len(chromeFeet[k].lines)
	}
	shell := false
	w := head[0].text
	switch {
	case nh > 0:
	case isLabel(w) && hasLabel(labels, w):
		nh, shell = 1, run
	case k >= 0 && chromeFeet[k].head != "" && matchChrome(chromeFeet[k].head, w):
		nh = 1
	}
	from, to := 0, len(body)
	if nh > 0 {
		from = head[nh-1].end
	}
	if nf > 0 {
		to = feet[len(feet)-nf].start
	}
	var code string // a first line of code the header was joined to
	if i := strings.Index(w, "Copy"); nh == 0 && i > 0 && hasLabel(labels, w[:i]) {
		code, nh, from = w[i+len("Copy"):], 1, head[0].end
		head[0].text = w[:i+len("Copy")]
	}
	if nh == 0 && nf == 0 || from > to {
		return body, ""
	}
	inner := body[from:to]
	if code != "" {
		inner = code + "\n" + inner
	}
	_, first := firstNonBlank(inner)
	last, lastStart := lastNonBlank(inner)
	if first < 0 {
		return body, "" // nothing but chrome: it may be content after all
	}
	if end := lastStart + len(last); end < len(inner) {
		inner = inner[first : end+1]
	} else {
		inner = inner[first:] + "\n"
	}
	return inner, chromeNote(head[:nh], feet[len(feet)-nf:], shell)
}

// maybeChrome is a quick look at the first and last lines of body: false
// when they cannot start a header or end a footer, as for most bodies.
func maybeChrome(body string) bool {
	first, start := firstNonBlank(body)
	if start < 0 {
		return false
	}
	if w := trimLine(first); isLabel(w) || strings.Contains(w, "Copy") || len(w) >= 4 && strings.EqualFold(w[:4], "copy") ||
		len(w) > 10 && strings.EqualFold(w[:10], "generated ") {
		return true
	}
	last, start := lastNonBlank(body)
	if w := trimLine(last); strings.Contains(w, "caution") || strings.EqualFold(w, "ignore_when_copying_end") {
		return true
	} else if !isLabel(w) {
		return false
	}
	last, _ = lastNonBlank(body[:start])
	return strings.Contains(last, "caution")
}

// chromeNote says what stripChrome left out: the lines of head and feet.
// Being chrome, they need no quoting but '...'.
func chromeNote(head, feet []edge, shell bool) string {
	list := func(lines []edge) string {
		q := make([]string, len(lines))
		for i, l := range lines {
			q[i] = "'" + l.text + "'"
		}
		return strings.Join(q, ", ")
	}
	s := "courier left out "
	switch {
	case shell:
		s += "its first line '" + head[0].text + "' (a shell started with no input does nothing)"
	case len(head) > 0:
		s += "the chat page's " + list(head) + " before the code"
	}
	if len(feet) > 0 {
		switch {
		case shell:
			s += " and the chat page's "
		case len(head) > 0:
			s += " and "
		default:
			s += "the chat page's "
		}
		s += list(feet) + " after the code"
	}
	if !shell || len(feet) > 0 {
		s += " (the reply was copied from the rendered page)"
	}
	return s
}

// cardProblem refuses a body that is only the card a chat page shows for
// code it keeps apart, Claude's artifact ("calc.py" over "Click to open
// code"): selecting the page leaves that code behind, and the card would
// replace a file.
func cardProblem(body string) string {
	var buf [3]edge
	lines := edges(buf[:0], body, 3, false)
	if len(lines) == 0 || len(lines) > 2 {
		return ""
	}
	last := lines[len(lines)-1].text
	i := strings.Index(last, "Click to open ")
	if i < 0 || !isLabel(last[i+len("Click to open "):]) {
		return ""
	}
	return fmt.Sprintf("holds only the chat page's card for code shown apart (%s), not the code itself, which copying the page leaves behind; write the whole content in the reply, not in an artifact or canvas",
		show(last))
}

// escapedNote is the note of a command whose tag had Markdown escapes.
const escapedNote = `courier read its tag without the backslashes of Markdown escapes (\[, \_)`

// addNote adds to what a command's result says was left out.
func addNote(cmd *command.Command, note string) {
	switch {
	case note == "":
	case cmd.Note == "":
		cmd.Note = note
	default:
		cmd.Note += "; " + note
	}
}

// mangledTag finds, in a reply where no command was read, a command's tag
// where none counts: inside a line, in code quotes, with escapes or marks
// left that no reading undoes. It returns its 0-based line and the tag.
func mangledTag(text string) (int, string, bool) {
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '[')
		if j < 0 {
			return 0, "", false
		}
		i += j + 1
		k := i
		if k < len(text) && text[k] == '/' {
			k++
		}
		var buf [maxNameLetters]byte
		n := 0
		for ; k < len(text) && n < len(buf); k++ {
			if c := text[k]; isLetter(c) || c == '_' {
				buf[n] = c &^ 0x20 // '_' stays '_'
				n++
			} else if c != '\\' {
				break
			}
		}
		if typeOf(string(buf[:n])) != "" && k < len(text) && tagGoesOn(text[k:]) {
			start, end := i-1, lineEnd(text, i)
			for start > 0 && text[start-1] == '\\' {
				start--
			}
			if e := strings.IndexByte(text[k:end], ']'); e >= 0 {
				end = k + e + 1
			}
			return strings.Count(text[:i], "\n"), text[start:end], true
		}
	}
}

// tagGoesOn reports what may follow a tag's name: its attributes or its
// end, but not the end of a Markdown link's text ("[DONE](url)").
func tagGoesOn(s string) bool {
	switch s[0] {
	case ' ', '\t', '/', '\\':
		return true
	case ']':
		return !strings.HasPrefix(s, "](")
	}
	return false
}

// mangledMessage tells the LLM that a tag was found where none counts.
func mangledMessage(line int, tag string) string {
	return fmt.Sprintf("Your reply has no command courier could read, yet line %d holds the tag %s where none counts. "+
		"A tag counts only alone at the start of its own line, written exactly like [RUN_COMMAND]: not inside a sentence, "+
		"code quotes or other formatting, without Markdown escapes (\\[, \\_). A reply copied from the rendered chat page "+
		"rather than with its copy button can come out so. Nothing was done; resend the commands.", line+1, show(tag))
}
