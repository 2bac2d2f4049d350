package protocol

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
)

// lineKind says what a line is to the scanner.
type lineKind uint8

const (
	kindText  lineKind = iota // prose, or a line of a body
	kindOpen                  // opening tag of a command courier knows
	kindOther                 // a whole line that is a tag with another name
	kindClose                 // a closing tag, [/NAME]
)

// attr is one attribute of a tag, its name normalised (see attrKey).
type attr struct {
	key, val string
	bad      bool // the value is malformed (an unclosed quote, say)
}

// tagLine is a line that starts with a tag, taken apart.
type tagLine struct {
	kind lineKind
	typ  command.Type // the command, for kindOpen
	// name is the tag name in upper case; with bare words that follow it
	// ("CREATE FILE") in words, for spotting near misses.
	name, words string
	written     string // the name as written, for telling NOTE from Note
	attrs       []attr
	bare        []string // words without "=value"
	trailing    string   // text after the closing ']'
	indent      int      // column of the '['
	problem     string   // what is wrong with the tag's syntax, if anything
	// inline holds the body of a one-line block, [NAME]body[/NAME].
	inline    string
	hasInline bool
	escaped   bool // written with Markdown escapes (see unescapeTag)
}

// typeOf returns the command a tag name (in upper case) names, or "".
func typeOf(name string) command.Type {
	if t := command.Type(name); slices.Contains(command.Types, t) {
		return t
	}
	return ""
}

// readTag says whether line is a tag line and takes it apart.
func readTag(line string) (t tagLine) {
	s, indent, escaped, ok := tagText(line)
	if !ok {
		return t
	}
	if strings.HasPrefix(s, "[/") {
		if written, ok := closerName(s); ok {
			return tagLine{kind: kindClose, name: strings.ToUpper(written), written: written, indent: indent, escaped: escaped}
		}
		return t
	}
	if len(s) < 2 || !isLetter(s[1]) {
		return t
	}
	end := nameEnd(s, 1)
	t.written = s[1:end]
	t.typ = typeOf(strings.ToUpper(t.written))
	t.name = string(t.typ)
	wordsEnd := end
	complete := t.readAttrs(s, end, &wordsEnd)
	switch {
	case t.typ != "" && strings.HasPrefix(t.trailing, "(") && complete:
		return tagLine{} // "[DONE](url)" is a Markdown link, not a command.
	case t.typ != "":
		t.kind = kindOpen
		if !complete && t.problem == "" {
			t.problem = "the tag has no closing ']'"
		}
		t.splitInline()
	case complete && t.trailing == "" && t.problem == "":
		t.kind = kindOther
		t.name = strings.ToUpper(t.written)
	default:
		return tagLine{}
	}
	t.words = t.name
	if wordsEnd > end {
		t.words = strings.ToUpper(strings.Join(strings.Fields(s[1:wordsEnd]), " "))
	}
	t.indent, t.escaped = indent, escaped
	return t
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// nameEnd returns the end of the tag or attribute name at s[i:]: letters,
// digits, '_' and '-'.
func nameEnd(s string, i int) int {
	for i < len(s) && (isLetter(s[i]) || s[i] >= '0' && s[i] <= '9' || s[i] == '_' || s[i] == '-') {
		i++
	}
	return i
}

// readAttrs reads attributes from s[i:] up to the closing ']'. It reports
// whether the tag was closed; syntax problems go to t.problem.
func (t *tagLine) readAttrs(s string, i int, wordsEnd *int) bool {
	for {
		for i < len(s) && (isBlank(s[i]) || s[i] == ',' || s[i] == ':') {
			i++
		}
		switch {
		case i >= len(s):
			return false
		case s[i] == ']', strings.HasPrefix(s[i:], "/]"): // [NAME .../] as well
			t.trailing = strings.TrimSpace(s[strings.IndexByte(s[i:], ']')+i+1:])
			return true
		}
		next := t.readAttr(s, i, wordsEnd)
		if next <= i {
			t.problem = "unexpected '" + firstRune(s[i:]) + "' in the tag"
			return strings.Contains(s[i:], "]")
		}
		i = next
	}
}

// readAttr reads one key=value pair or bare word at s[i:] and returns the
// index after it.
func (t *tagLine) readAttr(s string, i int, wordsEnd *int) int {
	start := i
	i = nameEnd(s, i)
	if i == start {
		return bareEnd(s, start, t)
	}
	key := s[start:i]
	j := skipBlanks(s, i)
	if j >= len(s) || (s[j] != '=' && s[j] != ':') {
		if len(t.attrs) == 0 {
			*wordsEnd = i // "CREATE FILE": the words are part of the name
		}
		return bareEnd(s, start, t)
	}
	j = skipBlanks(s, j+1)
	val, next, problem := readValue(s, j)
	if problem != "" && t.problem == "" {
		t.problem = "the value of " + key + " " + problem
	}
	t.attrs = append(t.attrs, attr{key: attrKey(key), val: val, bad: problem != ""})
	return next
}

// bareEnd records a word without a value and returns the index after it.
func bareEnd(s string, i int, t *tagLine) int {
	j := i
	for j < len(s) && !isBlank(s[j]) && s[j] != ']' {
		j++
	}
	if strings.HasSuffix(s[i:j], "/") && j < len(s) && s[j] == ']' {
		j--
	}
	if j > i {
		t.bare = append(t.bare, s[i:j])
	}
	return j
}

// readValue reads an attribute value: quoted with ASCII or typographic
// quotes, or unquoted up to a blank or the ']'.
func readValue(s string, i int) (val string, next int, problem string) {
	if i >= len(s) {
		return "", i, "is missing"
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if closers := quoteClosers(r); closers != "" {
		body := s[i+size:]
		end := strings.IndexAny(body, closers)
		if end < 0 {
			return strings.TrimSpace(body), len(s), "has no closing quote"
		}
		_, csize := utf8.DecodeRuneInString(body[end:])
		return unquoteCode(strings.TrimSpace(body[:end])), i + size + end + csize, ""
	}
	j := i
	for j < len(s) && !isBlank(s[j]) && s[j] != ']' {
		j++
	}
	if j < len(s) && s[j] == ']' && j > i && s[j-1] == '/' {
		j-- // "path=a.txt/]": the slash closes the tag
	}
	if j == i {
		return "", j, "is missing"
	}
	return s[i:j], j, ""
}

// quoteClosers lists the characters that may end a value opened by r; ""
// when r is not a quote. ASCII quotes must be closed by the same quote;
// typographic ones by any quote of their kind, since chat pages and word
// processors pair them inconsistently.
func quoteClosers(r rune) string {
	switch r {
	case '"':
		return `"`
	case '\'':
		return `'`
	case '“', '”', '„', '‟', '″':
		return `"“”„‟″`
	case '‘', '’', '‚', '‛':
		return `'‘’‚‛`
	case '«', '»':
		return "«»"
	case '‹', '›':
		return "‹›"
	case '`':
		return "`"
	}
	return ""
}

// unquoteCode removes Markdown code quotes inside a quoted value:
// path="`src/a.go`" names src/a.go.
func unquoteCode(v string) string {
	if len(v) >= 2 && v[0] == '`' && v[len(v)-1] == '`' {
		return strings.TrimSpace(v[1 : len(v)-1])
	}
	return v
}

func firstRune(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	return string(r)
}

// attrKey normalises an attribute name: case and '-' versus '_' do not
// matter, and a few aliases LLMs use are accepted.
func attrKey(k string) string {
	k = strings.ReplaceAll(strings.ToLower(k), "-", "_")
	switch k {
	case "file", "filename", "filepath", "file_path":
		return "path"
	case "start", "startline", "line_start":
		return "start_line"
	case "end", "endline", "line_end":
		return "end_line"
	case "line", "range":
		return "lines"
	case "dir", "workdir", "working_dir":
		return "cwd"
	case "nooverwrite":
		return "no_overwrite"
	}
	return k
}

// closerName reads [/NAME] (blanks inside the brackets allowed) and
// returns the name as written. Anything else after it makes the line
// ordinary text.
func closerName(s string) (string, bool) {
	if !strings.HasPrefix(s, "[/") {
		return "", false
	}
	inner, ok := strings.CutSuffix(s[2:], "]")
	if !ok {
		return "", false
	}
	inner = strings.TrimSpace(inner)
	if inner == "" || !isLetter(inner[0]) || nameEnd(inner, 0) != len(inner) {
		return "", false
	}
	return inner, true
}

// splitInline turns "[NAME]body[/NAME]" into a one-line block.
func (t *tagLine) splitInline() {
	if t.trailing == "" {
		return
	}
	i := strings.LastIndex(t.trailing, "[/")
	if i < 0 {
		return
	}
	if isCloserOf(t.trailing[i:], t.name) {
		t.inline = strings.TrimSpace(t.trailing[:i])
		t.hasInline = true
		t.trailing = ""
	}
}
