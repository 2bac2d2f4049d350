package edit

import (
	"strings"
)

// level is how loosely a search text is compared with the file. Levels are
// tried in order and the first one that finds anything decides, so a looser
// level never overrides an exact match.
type level int

const (
	// levelExact: the search text as a substring (after matching the file's
	// line endings), so it may start or end inside a line.
	levelExact level = iota
	// levelTrailing: whole lines, ignoring trailing spaces and tabs.
	levelTrailing
	// levelIndent: whole lines whose indentation differs from the file's by
	// the same number of columns on every non-blank line.
	levelIndent
)

// tabWidths are the tab sizes tried when one side indents with tabs and the
// other with spaces; the first that makes the shift uniform wins.
var tabWidths = []int{4, 8, 2}

// hit is one place a search text matches.
type hit struct {
	off, end int // byte span of an exact match
	line     int // 0-based first line
	n        int // lines in a line match
	shift    int // indentation columns to add to the replacement
	tab      int // tab width the shift was measured with
}

// matcher finds search texts in one version of a file. The line views are
// built on first use, since most pairs match exactly and never need them.
type matcher struct {
	content string
	eol     string
	lines   []string // without "\n"; a CRLF line keeps its "\r"
	offs    []int    // byte offset of each line, plus len(content)
	tabs    bool     // the file indents with tabs
	trimmed []string // lines without trailing whitespace
}

func newMatcher(content string) *matcher {
	return &matcher{content: content, eol: lineEnding(content)}
}

// loadLines builds the line views.
func (m *matcher) loadLines() {
	if m.offs != nil {
		return
	}
	m.lines = splitLines(m.content)
	m.offs = make([]int, len(m.lines)+1)
	m.trimmed = make([]string, len(m.lines))
	tabs := 0 // lines indented with a tab, less those with a space
	for i, l := range m.lines {
		m.offs[i+1] = min(m.offs[i]+len(l)+1, len(m.content))
		m.trimmed[i] = trimEOLSpace(l)
		if strings.HasPrefix(l, "\t") {
			tabs++
		} else if strings.HasPrefix(l, " ") {
			tabs--
		}
	}
	m.tabs = tabs > 0
}

// find returns every place search matches at the given level.
func (m *matcher) find(search string, lv level) []hit {
	if lv == levelExact {
		return m.findExact(search)
	}
	m.loadLines()
	sl := bodyLines(search)
	if len(sl) == 0 || len(sl) > len(m.lines) {
		return nil
	}
	var hits []hit
	for i := 0; i+len(sl) <= len(m.lines); i++ {
		if h, ok := m.matchAt(sl, i, lv); ok {
			hits = append(hits, h)
		}
	}
	return hits
}

// findExact finds search as a substring, overlapping matches included, so
// that "aa" in "aaa" counts as ambiguous.
func (m *matcher) findExact(search string) []hit {
	needle := withEnding(search, m.eol)
	if needle == "" {
		return nil
	}
	var hits []hit
	line, prev := 0, 0
	for i := 0; i < len(m.content); {
		j := strings.Index(m.content[i:], needle)
		if j < 0 {
			break
		}
		line += strings.Count(m.content[prev:i+j], "\n")
		prev = i + j
		hits = append(hits, hit{off: prev, end: prev + len(needle), line: line})
		i = prev + 1
	}
	return hits
}

// matchAt compares the search lines with the file from line i on.
func (m *matcher) matchAt(sl []string, i int, lv level) (hit, bool) {
	h := hit{line: i, n: len(sl), tab: tabWidths[0]}
	if lv == levelTrailing {
		for j, s := range sl {
			if m.trimmed[i+j] != trimEOLSpace(s) {
				return h, false
			}
		}
		return h, true
	}
	for _, tab := range tabWidths {
		if shift, ok := m.shiftAt(sl, i, tab); ok {
			h.shift, h.tab = shift, tab
			return h, true
		}
	}
	return h, false
}

// shiftAt reports whether the search lines equal the file's from line i
// apart from indentation, and by how many columns the file is indented more
// (or fewer, negative). Blank lines must face blank lines but say nothing
// about the shift.
func (m *matcher) shiftAt(sl []string, i, tab int) (int, bool) {
	shift, seen := 0, false
	for j, s := range sl {
		f := m.lines[i+j]
		sb, fb := isBlank(s), isBlank(f)
		if sb || fb {
			if sb != fb {
				return 0, false
			}
			continue
		}
		if strings.TrimSpace(s) != strings.TrimSpace(f) {
			return 0, false
		}
		d := indentWidth(indentOf(f), tab) - indentWidth(indentOf(s), tab)
		if seen && d != shift {
			return 0, false
		}
		shift, seen = d, true
	}
	return shift, true
}

// replace returns the content with the hit replaced by replace.
func (m *matcher) replace(h hit, lv level, replace string) string {
	if lv == levelExact {
		return m.content[:h.off] + withEnding(toLF(replace), m.eol) + m.content[h.end:]
	}
	repl := bodyLines(replace)
	if lv == levelIndent {
		repl = reindent(repl, h.shift, h.tab, m.tabs)
	}
	prefix := m.content[:m.offs[h.line]]
	suffix := m.content[m.offs[h.line+h.n]:]
	last := m.content[m.offs[h.line+h.n-1]:m.offs[h.line+h.n]]
	term := last[len(strings.TrimRight(last, "\r\n")):]
	if len(repl) == 0 {
		if suffix == "" && term == "" {
			// Deleting the unterminated last line: the line before becomes
			// last and, like the old one, ends without a newline.
			prefix = strings.TrimSuffix(strings.TrimSuffix(prefix, "\n"), "\r")
		}
		return prefix + suffix
	}
	return prefix + strings.Join(repl, m.eol) + term + suffix
}

// reindent moves every non-blank line shift columns right (left when
// negative) and writes the indentation in the file's style.
func reindent(lines []string, shift, tab int, useTabs bool) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if isBlank(l) {
			continue
		}
		ind := indentOf(l)
		w := max(indentWidth(ind, tab)+shift, 0)
		indent := strings.Repeat(" ", w)
		if useTabs {
			indent = strings.Repeat("\t", w/tab) + strings.Repeat(" ", w%tab)
		}
		out[i] = indent + l[len(ind):]
	}
	return out
}
