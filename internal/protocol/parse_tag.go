package protocol

import (
	"strings"
	"unicode/utf8"
	"unsafe"

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
	written     string   // the name as written, for telling NOTE from Note
	attrs       []attr   // kept in a full read only
	nattrs      int      // how many attributes there are, in any read
	bare        []string // words without "=value"
	hasBare     bool     // there are such words, in any read
	selfClose   bool     // written as [NAME .../]
	trailing    string   // text after the closing ']'
	indent      int      // column of the '['
	problem     string   // what is wrong with the tag's syntax, if anything
	// inline holds the body of a one-line block, [NAME]body[/NAME].
	inline    string
	hasInline bool
}

// typeOf returns the command a tag name (in upper case) names, or "".
func typeOf(name string) command.Type {
	switch name {
	case "CREATE_FILE":
		return command.CreateFile
	case "EDIT_FILE":
		return command.EditFile
	case "DELETE_FILE":
		return command.DeleteFile
	case "READ_FILE":
		return command.ReadFile
	case "RUN_COMMAND":
		return command.RunCommand
	case "MESSAGE":
		return command.Message
	case "DONE":
		return command.Done
	}
	return ""
}

// typeOfWritten is typeOf(strings.ToUpper(name)) for a name as nameEnd
// reads it, without the copy.
func typeOfWritten(name string) command.Type {
	var typ command.Type
	switch len(name) {
	case 4:
		typ = command.Done
	case 7:
		typ = command.Message
	case 9:
		if name[0]|0x20 == 'e' {
			typ = command.EditFile
		} else {
			typ = command.ReadFile
		}
	case 11:
		switch name[0] | 0x20 {
		case 'c':
			typ = command.CreateFile
		case 'd':
			typ = command.DeleteFile
		default:
			typ = command.RunCommand
		}
	default:
		return ""
	}
	// Most names that are not a command's differ in their first letter.
	if name[0]|0x20 != typ[0]|0x20 || name != string(typ) && !upperIs(name, string(typ)) {
		return ""
	}
	return typ
}

// reset empties t, keeping the attributes' slice (see classify).
func (t *tagLine) reset() {
	attrs := t.attrs[:0]
	*t = tagLine{}
	t.attrs = attrs
}

// classify says whether line is a tag line and takes it apart into t,
// which it resets first. When full is false, the attributes and bare words
// are only read past and counted, not kept: that is all a scan for the end
// of a block needs, and all an unknown tag needs.
func (t *tagLine) classify(line string, full bool, up *upperNames) {
	// Longer lines are mostly tags with attributes, which classifyName
	// would read twice; the checks here save most lines the call.
	if n := len(line); n >= 3 && n <= 16 && line[0] == '[' && line[n-1] == ']' && t.classifyName(line, full, up) {
		return
	}
	// A full read keeps the attributes' slice for the next: they are read
	// from t only while its command is handled.
	t.reset()
	if !full {
		t.attrs = nil
	}
	if t.classifyPlain(line, full, up) {
		return
	}
	k, ok := tagOpen(line)
	if !ok || t.classifyJunk(line, k, up) {
		return
	}
	t.classifyAt(line, k, full, up)
}

// classifyGeneral is classify without its shortcuts, for line as reset t
// finds it; the shortcuts must agree with it (see the tests).
func (t *tagLine) classifyGeneral(line string, full bool, up *upperNames) {
	if k, ok := tagOpen(line); ok {
		t.classifyAt(line, k, full, up)
	}
}

// classifyAt is the general reading of a line whose tag's '[' is at k.
func (t *tagLine) classifyAt(line string, k int, full bool, up *upperNames) {
	s, indent, ok := tagStartAt(line, k, up)
	if !ok {
		return
	}
	t.parse(s, full, up)
	if t.kind != kindText {
		t.indent = indent
	}
}

// classifyJunk is classify for a tag without attributes, [NAME] or
// [/NAME], with invisible characters or odd spaces pasted around it
// ("\ufeff[RUN_COMMAND\u200b]"): its name is read from line as it is,
// without the cleaned copy the general reading makes. k is where tagOpen
// found the '['. It reports false, having set nothing, for any other line
// (junk inside the name, attributes, text after the tag), which the
// general reading then takes.
func (t *tagLine) classifyJunk(line string, k int, up *upperNames) bool {
	i := k + 1
	closer := i < len(line) && line[i] == '/'
	if closer {
		i = skipJunk(line, i+1)
	}
	if i == len(line) || !isLetter(line[i]) {
		return false
	}
	e := nameEnd(line, i)
	// Between the name and the ']' only blanks and junk, which cleaning
	// removes or makes blanks: nothing that would rejoin the name or be
	// an attribute. After the ']', nothing else.
	j := skipJunk(line, e)
	if j == len(line) || line[j] != ']' || skipJunk(line, j+1) != len(line) {
		return false
	}
	written := line[i:e]
	t.written, t.indent = written, cleanColumns(line[:k])
	if closer {
		t.kind, t.name = kindClose, upperName(written, up)
		return true
	}
	if t.typ = typeOfWritten(written); t.typ != "" {
		t.kind, t.name = kindOpen, string(t.typ)
	} else {
		t.kind, t.name = kindOther, up.of(written)
	}
	t.words = t.name
	return true
}

// classifyName is classify for the commonest tag line, "[NAME]" alone,
// with none of the general checks: a reply of nothing but such lines
// reads each at the cost of its name. It reports false, having changed
// nothing, for any other line.
func (t *tagLine) classifyName(line string, full bool, up *upperNames) bool {
	n := len(line)
	if n < 3 || line[0] != '[' || line[n-1] != ']' || !isLetter(line[1]) {
		return false
	}
	// As in classifyPlain, only lower-case letters set both 0x40 and 0x20.
	both := byte(0)
	for i := 1; i < n-1; i++ {
		c := line[i]
		if !nameBytes[c] {
			return false
		}
		both |= c & (c << 1)
	}
	written := line[1 : n-1]
	typ := typeOfWritten(written)
	kind, name := kindOpen, string(typ)
	if typ == "" {
		kind, name = kindOther, written
		if both&0x40 != 0 {
			name = up.of(written)
		}
	}
	// Zeroed, then filled field by field: a composite literal would be
	// built aside and copied.
	var attrs []attr
	if full {
		attrs = t.attrs[:0] // kept for the next, as classify does
	}
	*t = tagLine{}
	t.kind, t.typ, t.name, t.words, t.written, t.attrs = kind, typ, name, name, written, attrs
	return true
}

// classifyPlain is classify for the usual tag line, read in one go: an
// ASCII [NAME], [NAME a="x" b="y"] or [/NAME] after blanks and maybe a
// list marker, with only blanks after it. Lines that are text for plain
// reasons ("- [ ] todo", "- [x] done") are told at once too. It reports
// false, having set nothing, for any other line, which the general
// reading then takes.
func (t *tagLine) classifyPlain(line string, full bool, up *upperNames) bool {
	k, indent := 0, 0
	for k < len(line) && isBlank(line[k]) {
		if line[k] == '\t' {
			indent += 4 - indent%4
		} else {
			indent++
		}
		k++
	}
	if k < len(line) && line[k] != '[' {
		// An ASCII list marker, as tagOpen reads it.
		if j := skipListMarker(line, k); j > k {
			indent += asciiColumnsFrom(line[k:j], indent)
			k = j
		}
	}
	if k == len(line) || line[k] != '[' {
		return false
	}
	if k+1 < len(line) {
		if c := line[k+1]; c != '/' && c < utf8.RuneSelf && !isLetter(c) {
			return true // "[ ]", "[1]": text, as tagStart has it
		}
	}
	end := len(line)
	for end > k && isBlank(line[end-1]) {
		end--
	}
	// What follows is ASCII where it is read by name (nameBytes are) and
	// is checked where it is passed over (attribute values).
	s := line[k:end]
	if len(s) < 3 {
		return false
	}
	if s[1] == '/' {
		if s[len(s)-1] != ']' || !isLetter(s[2]) || nameEnd(s, 2) != len(s)-1 {
			return false
		}
		written := s[2 : len(s)-1]
		t.kind, t.name, t.written, t.indent = kindClose, upperName(written, up), written, indent
		return true
	}
	if !isLetter(s[1]) {
		return false
	}
	// Of the name's bytes only lower-case letters have both 0x40 and 0x20
	// set: they are told apart on the way, for upper-casing.
	e, both := 1, byte(0)
	for e < len(s) && nameBytes[s[e]] {
		both |= s[e] & (s[e] << 1)
		e++
	}
	if e < len(s)-1 && s[e] == ']' {
		// "[x] done": with another name than a command's, text when
		// what follows is (parse's reading: complete, with trailing text).
		rest := s[e+1:]
		return typeOfWritten(s[1:e]) == "" && isASCII(rest) && trimSpaceASCII(rest) != ""
	}
	written := s[1:e]
	t.typ = typeOfWritten(written)
	t.name, t.written = string(t.typ), written
	if t.typ == "" && both&0x40 == 0 {
		t.name = written // already upper case; parsePlain takes it
	}
	if !t.parsePlain(s, e, full, up, true) {
		t.typ, t.name, t.written = "", "", ""
		return false
	}
	t.indent = indent
	return true
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// nameBytes are the bytes of a tag or attribute name: letters, digits,
// '_' and '-'. A table, since names are read byte by byte on every tag.
var nameBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = isLetter(byte(c)) || (c >= '0' && c <= '9') || c == '_' || c == '-'
	}
	return t
}()

func nameEnd(s string, i int) int {
	for i < len(s) && nameBytes[s[i]] {
		i++
	}
	return i
}

// parse reads a tag from s, which starts with '[', into t, which is
// reset; see classify for full.
func (t *tagLine) parse(s string, full bool, up *upperNames) {
	if strings.HasPrefix(s, "[/") {
		if written, ok := closerName(s); ok {
			t.kind, t.name, t.written = kindClose, upperName(written, up), written
		}
		return
	}
	if len(s) < 2 || !isLetter(s[1]) {
		return
	}
	end := nameEnd(s, 1)
	// The name in upper case is needed only for a tag that is not text;
	// for a command's it is the command's.
	t.written = s[1:end]
	t.typ = typeOfWritten(t.written)
	t.name = string(t.typ)
	if t.parsePlain(s, end, full, up, false) {
		return
	}
	wordsEnd := end
	complete := t.readAttrs(s, end, &wordsEnd, full)
	switch {
	case t.typ != "" && strings.HasPrefix(t.trailing, "(") && complete:
		// "[DONE](url)" is a Markdown link, not a command.
		t.reset()
		return
	case t.typ != "":
		t.kind = kindOpen
		if !complete && t.problem == "" {
			t.problem = "the tag has no closing ']'"
		}
		t.splitInline()
	case complete && t.trailing == "" && t.problem == "":
		t.kind = kindOther
		t.name = up.of(t.written)
	default:
		t.reset()
		return
	}
	t.words = t.name
	if wordsEnd > end {
		t.words = strings.ToUpper(strings.Join(strings.Fields(s[1:wordsEnd]), " "))
	}
}

// upperName is a name as nameEnd reads it in upper case.
func upperName(written string, up *upperNames) string {
	if typ := typeOfWritten(written); typ != "" {
		return string(typ)
	}
	return up.of(written)
}

// parsePlain reads the rest of the usual tag, [NAME] or [NAME a="x" b="y"]
// with nothing after it, from s[end:], faster than the general reading
// and with the same result. It reports false, having changed nothing, for
// anything else, which the general reading then takes. When s is raw, not
// cleaned, attribute values must be ASCII, which cleaning leaves alone.
func (t *tagLine) parsePlain(s string, end int, full bool, up *upperNames, raw bool) bool {
	n := 0
	for i := end; ; {
		switch {
		case i == len(s)-1 && s[i] == ']':
			if full && n > 0 {
				if cap(t.attrs) < n {
					t.attrs = make([]attr, 0, n)
				}
				t.readPlainAttrs(s[end:i])
			}
			switch {
			case t.typ != "":
				t.kind = kindOpen
			case t.name != "": // upper-cased by the caller
				t.kind = kindOther
			default:
				t.kind, t.name = kindOther, up.of(t.written)
			}
			t.nattrs, t.words = n, t.name
			return true
		case i < len(s) && s[i] == ' ':
			i++
			k := nameEnd(s, i)
			if k == i || k+1 >= len(s) || s[k] != '=' || s[k+1] != '"' {
				return false
			}
			q := strings.IndexByte(s[k+2:], '"')
			if q < 0 || raw && !isASCII(s[k+2:k+2+q]) {
				return false
			}
			i = k + 2 + q + 1
			n++
		default:
			return false
		}
	}
}

// readPlainAttrs keeps the attributes of a tag parsePlain accepted, which
// s holds as ` a="x" b="y"`.
func (t *tagLine) readPlainAttrs(s string) {
	for len(s) > 0 {
		s = s[1:] // the space
		k := nameEnd(s, 0)
		q := strings.IndexByte(s[k+2:], '"')
		val := unquoteCode(strings.TrimSpace(s[k+2 : k+2+q]))
		t.attrs = append(t.attrs, attr{key: attrKey(s[:k]), val: val})
		s = s[k+2+q+1:]
	}
}

// readAttrs reads attributes from s[i:] up to the closing ']'. It reports
// whether the tag was closed; syntax problems go to t.problem.
func (t *tagLine) readAttrs(s string, i int, wordsEnd *int, full bool) bool {
	for {
		for i < len(s) && (isBlank(s[i]) || s[i] == ',' || s[i] == ':') {
			i++
		}
		switch {
		case i >= len(s):
			return false
		case s[i] == ']':
			t.trailing = strings.TrimSpace(s[i+1:])
			return true
		case strings.HasPrefix(s[i:], "/]"):
			t.selfClose = true
			t.trailing = strings.TrimSpace(s[i+2:])
			return true
		}
		next := t.readAttr(s, i, wordsEnd, full)
		if next <= i {
			t.problem = "unexpected '" + firstRune(s[i:]) + "' in the tag"
			return strings.Contains(s[i:], "]")
		}
		i = next
	}
}

// readAttr reads one key=value pair or bare word at s[i:] and returns the
// index after it; only a full read keeps them.
func (t *tagLine) readAttr(s string, i int, wordsEnd *int, full bool) int {
	start := i
	i = nameEnd(s, i)
	if i == start {
		return bareEnd(s, start, t, full)
	}
	key := s[start:i]
	j := skipBlanks(s, i)
	if j >= len(s) || (s[j] != '=' && s[j] != ':') {
		if t.nattrs == 0 {
			*wordsEnd = i // "CREATE FILE": the words are part of the name
		}
		return bareEnd(s, start, t, full)
	}
	j = skipBlanks(s, j+1)
	val, next, problem := readValue(s, j)
	if problem != "" && t.problem == "" {
		t.problem = "the value of " + key + " " + problem
	}
	t.nattrs++
	if full {
		t.attrs = append(t.attrs, attr{key: attrKey(key), val: val, bad: problem != ""})
	}
	return next
}

// bareEnd records a word without a value (in a full read) and returns the
// index after it.
func bareEnd(s string, i int, t *tagLine, full bool) int {
	j := i
	for j < len(s) && !isBlank(s[j]) && s[j] != ']' {
		j++
	}
	if strings.HasSuffix(s[i:j], "/") && j < len(s) && s[j] == ']' {
		j--
	}
	if j > i {
		t.hasBare = true
		if full {
			t.bare = append(t.bare, s[i:j])
		}
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
	switch k { // the usual spellings, without a copy
	case "path", "lines", "start_line", "end_line", "cwd", "timeout", "overwrite", "no_overwrite":
		return k
	}
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

// parseCloser reads [/NAME] (blanks inside the brackets allowed) and
// returns the name in upper case and as written. Anything else after it
// makes the line ordinary text.
func parseCloser(s string) (name, written string, ok bool) {
	written, ok = closerName(s)
	return strings.ToUpper(written), written, ok
}

// closerName is the name of the closing tag s as written.
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

// upperNames upper-cases tag names, remembering those it had to copy, so
// that a reply with the same lower-case name on every line (a Markdown
// task list's [x]) does not copy it every time.
type upperNames struct {
	seen map[string]string
	// raw and cleaned are the last tag text that needed cleaning and the
	// result, since a scan and then the main loop read the same line.
	raw, cleaned string
	// texts holds cleaned tag texts, which are never written again once
	// handed out: a reply with invisible characters in every tag does
	// not allocate for each.
	texts []byte
}

// maxArenaText is the longest tag text cleaned into texts; longer ones
// get their own string.
const maxArenaText = 4 << 10

// clean is cleanLine(s), remembering the last result that was a copy for
// the same place of the reply (not for the same text elsewhere: what a
// line costs should not depend on the lines before it).
func (u *upperNames) clean(s string) string {
	if isASCII(s) {
		return s
	}
	if len(s) == len(u.raw) && unsafe.StringData(s) == unsafe.StringData(u.raw) {
		return u.cleaned
	}
	u.raw, u.cleaned = s, ""
	if len(s) > maxArenaText {
		u.cleaned = cleanLine(s)
		return u.cleaned
	}
	// Cleaning turns a byte that is not UTF-8 into three: room for the
	// worst is made first, so that appending never moves what was handed
	// out.
	if cap(u.texts)-len(u.texts) < 3*len(s) {
		u.texts = make([]byte, 0, max(3*len(s), min(2*cap(u.texts), 64<<10), 512))
	}
	start := len(u.texts)
	u.texts = appendClean(u.texts, s)
	if n := len(u.texts) - start; n > 0 {
		u.cleaned = unsafe.String(&u.texts[start], n)
	}
	return u.cleaned
}

// maxUpperNames bounds the names remembered.
const maxUpperNames = 256

// of returns name (ASCII, as nameEnd reads it) in upper case.
func (u *upperNames) of(name string) string {
	lower := false
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'a' && c <= 'z' {
			lower = true
			break
		}
	}
	if !lower {
		return name
	}
	var buf [32]byte
	if len(name) > len(buf) {
		return strings.ToUpper(name)
	}
	b := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = c
	}
	if v, ok := u.seen[string(b)]; ok {
		return v
	}
	v := string(b)
	if u.seen == nil {
		u.seen = map[string]string{}
	}
	if len(u.seen) < maxUpperNames {
		u.seen[v] = v
	}
	return v
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
	if name, _, ok := parseCloser(t.trailing[i:]); ok && name == t.name {
		t.inline = strings.TrimSpace(t.trailing[:i])
		t.hasInline = true
		t.trailing = ""
	}
}
