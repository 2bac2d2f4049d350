package workspace

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/courier-agent/courier/internal/human"
)

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	// name is a rule without a slash: it matches the last element of a
	// path at any depth.
	name *elemGlob
	// paths are the forms of a rule with a slash, matched from the file's
	// folder; matching any of them matches.
	paths   [][]elemGlob
	negate  bool
	dirOnly bool
}

// ignoreFile holds the rules of one ignore file.
type ignoreFile struct {
	base  int // the length of its folder's path with the slash
	rules []ignoreRule
}

// match returns the last rule of f that matches the workspace path p.
func (f *ignoreFile) match(p string, isDir bool) *ignoreRule {
	elems := strings.Split(p[f.base:], "/")
	for i := len(f.rules) - 1; i >= 0; i-- {
		if f.rules[i].match(elems, isDir) {
			return &f.rules[i]
		}
	}
	return nil
}

// What courier uses of one ignore file, so that a hostile one costs little
// (a .gitignore of 25 MB made every turn take minutes; real ones hold a
// few KB): its first MB and 10,000 patterns, no line over PATH_MAX.
const (
	maxIgnoreBytes = 1 << 20
	maxIgnoreRules = 10_000
	maxIgnoreLine  = 4096
)

// IgnoreCutNote says courier uses only the first patterns of file p.
func IgnoreCutNote(p string, patterns int) string {
	n := human.Count(patterns, "pattern", "")
	if patterns > 1 {
		n = human.Thousands(patterns) + " patterns"
	}
	return fmt.Sprintf("courier uses only the first %s of %s: it reads at most 1 MB and 10,000 patterns of an ignore file, and no line longer than 4,096 bytes; files the rest would leave out are listed",
		n, p)
}

// readIgnore reads what parseIgnore may use, and a byte more.
func readIgnore(r io.Reader) []byte {
	data, _ := io.ReadAll(io.LimitReader(r, maxIgnoreBytes+1))
	return data
}

// parseIgnore compiles the lines that can match something, within the
// bounds above; cut tells that some of data was left unused.
func parseIgnore(data []byte) (rules []ignoreRule, cut bool) {
	if len(data) > maxIgnoreBytes {
		// The last line the bound reaches into is not whole.
		data, cut = data[:bytes.LastIndexByte(data[:maxIgnoreBytes], '\n')+1], true
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		if len(line) > maxIgnoreLine {
			cut = true
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if r, ok := parseRule(string(line)); ok {
			if len(rules) == maxIgnoreRules {
				return rules, true
			}
			rules = append(rules, r)
		}
	}
	return rules, cut
}

// parseRule compiles one line as git reads it: "#" comments, "!" negates,
// a trailing "/" means folders only, a slash elsewhere anchors.
func parseRule(line string) (ignoreRule, bool) {
	var r ignoreRule
	if line = trimTrailingSpaces(line); line == "" || line[0] == '#' {
		return r, false
	}
	line, r.negate = strings.CutPrefix(line, "!")
	if line, r.dirOnly = strings.CutSuffix(line, "/"); line == "" {
		return r, false
	}
	if !strings.Contains(line, "/") {
		g, ok := compileElem(line)
		// A lone "**" in a rule without a slash is any name, not any depth.
		if g.anyElems {
			g, ok = compileElem("*")
		}
		r.name = &g
		return r, ok
	}
	for _, alt := range pathForms(strings.TrimPrefix(line, "/")) {
		elems, ok := compilePath(alt)
		if !ok {
			return r, false
		}
		r.paths = append(r.paths, elems)
	}
	return r, true
}

func compilePath(p string) ([]elemGlob, bool) {
	var elems []elemGlob
	parts, escaped := splitPattern(p)
	for i, part := range parts {
		g, ok := compileElem(part)
		if !ok {
			return nil, false
		}
		// A trailing "/**" matches what is inside, not the folder itself,
		// and git lets "**\/" skip no folder: at least one element.
		if g.anyElems && (i == len(parts)-1 || escaped[i]) {
			star, _ := compileElem("*")
			elems = append(elems, star)
		}
		elems = append(elems, g)
	}
	return elems, true
}

// pathForms returns the patterns that together match what git matches for
// p. Git matches a pattern's literal start apart, so "**" right after one
// not ending in "/" ("b**/x") acts as a leading "**": it crosses folders,
// and "**/" may match nothing ("bx").
func pathForms(p string) []string {
	n := strings.IndexAny(p, `*?[\`)
	if n <= 0 || p[n-1] == '/' || !strings.HasPrefix(p[n:], "**") {
		return []string{p}
	}
	lit, rest := p[:n], strings.TrimLeft(p[n:], "*")
	switch {
	case rest == "":
		return []string{lit + "*", lit + "*/**"}
	case rest[0] == '/':
		return []string{lit + rest[1:], lit + "*/**/" + rest[1:]}
	case strings.HasPrefix(rest, `\/`):
		return []string{lit + "*/**/" + rest[2:]}
	}
	return []string{p}
}

// splitPattern splits a pattern at its slashes, escaped ones too (marked
// in escaped), but not inside "[...]", which git reads as one piece.
func splitPattern(p string) (parts []string, escaped []bool) {
	start := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) && p[i+1] == '/' {
				parts = append(parts, p[start:i])
				escaped = append(escaped, true)
				start = i + 2
			}
			i++
		case '[':
			if _, n, ok := compileSet(p[i:]); ok {
				i += n - 1
			}
		case '/':
			parts = append(parts, p[start:i])
			escaped = append(escaped, false)
			start = i + 1
		}
	}
	return append(parts, p[start:]), append(escaped, false)
}

// trimTrailingSpaces drops trailing spaces, except one escaped by "\".
func trimTrailingSpaces(s string) string {
	t := strings.TrimRight(s, " ")
	if n := len(t) - len(strings.TrimRight(t, `\`)); n%2 == 1 && len(t) < len(s) {
		t += " "
	}
	return t
}

// match reports whether the rule matches a path's elements from its file.
func (r *ignoreRule) match(elems []string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.name != nil {
		return r.name.match(elems[len(elems)-1])
	}
	for _, p := range r.paths {
		if matchElems(p, elems) {
			return true
		}
	}
	return false
}

// Patterns are .gitignore-style lines from courier's settings, matched as
// a root .gitignore's lines: the last matching line decides, "!" negates.
type Patterns struct {
	file ignoreFile
}

// CompilePatterns compiles setting lines; a line git would never match is
// an error, since the person meant something by it.
func CompilePatterns(lines []string) (*Patterns, error) {
	p := &Patterns{}
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		r, ok := parseRule(line)
		if !ok {
			return nil, fmt.Errorf("bad pattern %q", line)
		}
		p.file.rules = append(p.file.rules, r)
	}
	return p, nil
}

// Match reports whether the list matches the path itself, not its folders.
func (p *Patterns) Match(path string, isDir bool) bool {
	if p == nil {
		return false
	}
	r := p.file.match(path, isDir)
	return r != nil && !r.negate
}

// MayMatchInside reports whether a line with a slash could match inside
// dir (lines without one would make every folder worth entering).
func (p *Patterns) MayMatchInside(dir string) bool {
	if p == nil {
		return false
	}
	elems := strings.Split(dir, "/")
	return slices.ContainsFunc(p.file.rules, func(r ignoreRule) bool {
		return !r.negate && slices.ContainsFunc(r.paths, func(pat []elemGlob) bool { return mayMatchBelow(pat, elems) })
	})
}

// GitIgnore tells whether a workspace path is ignored as git decides, safe
// for concurrent use; it reads ignore files once: make one per listing.
func (w *Workspace) GitIgnore() func(p string, isDir bool) bool {
	g := &gitIgnore{w: w, dirs: map[string]*ignoreDir{}, excluded: map[string]bool{}}
	return g.ignored
}

type gitIgnore struct {
	w        *Workspace
	mu       sync.Mutex
	dirs     map[string]*ignoreDir // "" is the workspace folder
	excluded map[string]bool
}

func (g *gitIgnore) ignored(p string, isDir bool) bool {
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if isDir {
		return g.dirIgnored(c)
	}
	return g.decide(c, false)
}

// dirIgnored decides a folder, once.
func (g *gitIgnore) dirIgnored(d string) bool {
	v, ok := g.excluded[d]
	if !ok {
		v = g.decide(d, true)
		g.excluded[d] = v
	}
	return v
}

// decide: p is ignored when its folder is (git never looks inside one to
// re-include anything) or its folder's ignore files say so.
func (g *gitIgnore) decide(p string, isDir bool) bool {
	parent := parentDir(p)
	return parent != "" && g.dirIgnored(parent) || g.dir(parent).ignored(p, isDir)
}

// dir returns what the ignore files say in the folder d.
func (g *gitIgnore) dir(d string) *ignoreDir {
	if x, ok := g.dirs[d]; ok {
		return x
	}
	var parent *ignoreDir
	if d != "" {
		parent = g.dir(parentDir(d))
	}
	x := g.w.enterIgnore(d, parent, func(name string) []byte { return g.w.readIgnoreFile(path.Join(d, name)) }, nil)
	g.dirs[d] = x
	return x
}

// parentDir is the folder of p, "" for the workspace folder.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// readIgnoreFile reads ignore file p if regular: git follows no linked one.
func (w *Workspace) readIgnoreFile(p string) []byte {
	if info, err := w.root.Lstat(p); err != nil || !info.Mode().IsRegular() {
		return nil
	}
	f, _, err := w.OpenRegular(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	return readIgnore(f)
}

// ignoreDir holds a folder's ignore files in force, lowest precedence first.
type ignoreDir struct {
	files []*ignoreFile
}

// enterIgnore is a walk's enter hook reading .git/info/exclude and each
// .gitignore; cut, when set, is told of one used only in part.
func (w *Workspace) enterIgnore(dir string, parent *ignoreDir, read func(name string) []byte, cut func(string, int)) *ignoreDir {
	d := &ignoreDir{}
	if parent == nil {
		// Read through the root, since .git may be a symlink.
		d.add(".git/info/exclude", 0, w.readIgnoreFile(".git/info/exclude"), cut)
	} else {
		d.files = parent.files[:len(parent.files):len(parent.files)]
	}
	base := 0
	if dir != "" {
		base = len(dir) + 1
	}
	if data := read(".gitignore"); data != nil {
		d.add(path.Join(dir, ".gitignore"), base, data, cut)
	}
	if parent != nil && len(d.files) == len(parent.files) {
		return parent
	}
	return d
}

// add adds the rules of ignore file name, its folder base bytes long.
func (d *ignoreDir) add(name string, base int, data []byte, cut func(string, int)) {
	rules, partly := parseIgnore(data)
	if partly && cut != nil {
		cut(name, len(rules))
	}
	if len(rules) > 0 {
		d.files = append(d.files, &ignoreFile{base: base, rules: rules})
	}
}

// ignored decides the entry p: the deepest file with a matching rule.
func (d *ignoreDir) ignored(p string, isDir bool) bool {
	if d == nil {
		return false
	}
	for i := len(d.files) - 1; i >= 0; i-- {
		if r := d.files[i].match(p, isDir); r != nil {
			return !r.negate
		}
	}
	return false
}

// elemGlob is one path element of a pattern, matched as git's wildmatch.
type elemGlob struct {
	toks     []globTok
	anyElems bool // "**": any number of path elements
}

type tokKind uint8

const (
	tokByte tokKind = iota
	tokOne          // "?"
	tokStar         // "*" (and "**" inside an element)
	tokSet          // "[...]"
)

type globTok struct {
	kind tokKind
	b    byte
	set  *byteSet
}

// byteSet is a bracket expression as a bitmap.
type byteSet [4]uint64

func (s *byteSet) add(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		s[c>>6] |= 1 << (c & 63)
	}
}

func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// compileElem compiles one element; ok is false when git would never
// match it (an unterminated "[", a trailing "\", an unknown class).
func compileElem(e string) (g elemGlob, ok bool) {
	// Two or more stars alone between slashes cross folders, as in git.
	if len(e) >= 2 && strings.Trim(e, "*") == "" {
		return elemGlob{anyElems: true}, true
	}
	for i := 0; i < len(e); {
		switch c := e[i]; c {
		case '*':
			g.toks = append(g.toks, globTok{kind: tokStar})
			for i < len(e) && e[i] == '*' {
				i++
			}
		case '?':
			g.toks = append(g.toks, globTok{kind: tokOne})
			i++
		case '[':
			set, n, ok := compileSet(e[i:])
			if !ok {
				return elemGlob{}, false
			}
			g.toks = append(g.toks, globTok{kind: tokSet, set: set})
			i += n
		case '\\':
			if i+1 >= len(e) {
				return elemGlob{}, false
			}
			g.toks = append(g.toks, globTok{kind: tokByte, b: e[i+1]})
			i += 2
		default:
			g.toks = append(g.toks, globTok{kind: tokByte, b: c})
			i++
		}
	}
	return g, true
}

// compileSet compiles the bracket expression starting p, as git: "!" or "^"
// first negates, "]" first is literal, "\" escapes, "a-z", "[:alpha:]".
func compileSet(p string) (*byteSet, int, bool) {
	var set byteSet
	i := 1
	negate := i < len(p) && (p[i] == '!' || p[i] == '^')
	if negate {
		i++
	}
	prev := -1 // where a following "-" would start a range
	for first := true; ; first = false {
		if i >= len(p) {
			return nil, 0, false
		}
		c := p[i]
		switch {
		case c == ']' && !first:
			if negate {
				for k := range set {
					set[k] = ^set[k]
				}
			}
			return &set, i + 1, true
		case c == '\\':
			if i+1 >= len(p) {
				return nil, 0, false
			}
			set.add(p[i+1], p[i+1])
			prev = int(p[i+1])
			i += 2
		case c == '-' && prev >= 0 && i+1 < len(p) && p[i+1] != ']':
			hi, n := p[i+1], 1 // the range's end, which may be escaped
			if hi == '\\' {
				if i+2 >= len(p) {
					return nil, 0, false
				}
				hi, n = p[i+2], 2
			}
			if byte(prev) <= hi {
				set.add(byte(prev), hi)
			}
			prev = -1
			i += 1 + n
		case c == '[' && i+1 < len(p) && p[i+1] == ':':
			n, ok, known := addClass(&set, p[i:])
			if !known {
				return nil, 0, false
			}
			if ok {
				prev = -1
				i += n
				continue
			}
			// "[:" without ":]" is an ordinary "[".
			set.add('[', '[')
			prev = '['
			i++
		default:
			set.add(c, c)
			prev = int(c)
			i++
		}
	}
}

// addClass adds the "[:name:]" class starting p; !ok: no class here;
// !known: a name git does not know or a "[:" never closed.
func addClass(set *byteSet, p string) (n int, ok, known bool) {
	end := strings.IndexByte(p[2:], ']')
	if end < 0 {
		return 0, false, false
	}
	body := p[2 : 2+end]
	name, isClass := strings.CutSuffix(body, ":")
	if !isClass {
		return 0, false, true
	}
	ranges, known := classes[name]
	if !known {
		return 0, false, false
	}
	for k := 0; k < len(ranges); k += 2 {
		set.add(ranges[k], ranges[k+1])
	}
	return 2 + end + 1, true, true
}

// classes are the POSIX classes git knows, ASCII, as byte range bounds.
var classes = map[string]string{
	"alnum": "09AZaz", "alpha": "AZaz", "blank": "\t\t  ", "cntrl": "\x00\x1f\x7f\x7f",
	"digit": "09", "graph": "!~", "lower": "az", "print": " ~", "punct": "!/:@[`{~",
	"space": "\t\r  ", "upper": "AZ", "xdigit": "09AFaf",
}

// match reports whether one path element matches: greedy, with a single
// backtrack point, so hostile patterns stay cheap.
func (g *elemGlob) match(s string) bool {
	ti, si := 0, 0
	star, starS := -1, 0
	for ti < len(g.toks) || si < len(s) {
		if ti < len(g.toks) {
			t := &g.toks[ti]
			if t.kind == tokStar {
				star, starS = ti, si
				ti++
				continue
			}
			if si < len(s) && t.matches(s[si]) {
				ti++
				si++
				continue
			}
		}
		if star < 0 || starS >= len(s) {
			return false
		}
		starS++
		ti, si = star+1, starS
	}
	return true
}

func (t *globTok) matches(c byte) bool {
	switch t.kind {
	case tokOne:
		return true
	case tokSet:
		return t.set.has(c)
	}
	return t.b == c
}

// matchElems matches path elements as match does bytes, "**" any number.
func matchElems(pat []elemGlob, elems []string) bool {
	pi, ei := 0, 0
	star, starE := -1, 0
	for pi < len(pat) || ei < len(elems) {
		if pi < len(pat) {
			if pat[pi].anyElems {
				star, starE = pi, ei
				pi++
				continue
			}
			if ei < len(elems) && pat[pi].match(elems[ei]) {
				pi++
				ei++
				continue
			}
		}
		if star < 0 || starE >= len(elems) {
			return false
		}
		starE++
		pi, ei = star+1, starE
	}
	return true
}

// mayMatchBelow reports whether pat could match elems and more: a "**"
// reached before elems run out takes the rest.
func mayMatchBelow(pat []elemGlob, elems []string) bool {
	for i, e := range elems {
		if i >= len(pat) || !pat[i].anyElems && !pat[i].match(e) {
			return false
		}
		if pat[i].anyElems {
			return true
		}
	}
	return len(pat) > len(elems)
}

// IsGlob reports whether a path holds glob characters.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// Pattern is a compiled glob: "*", "?" and "[...]" (negated by "!" or
// "^") within one segment, and a "**" segment for any number of folders.
type Pattern struct {
	segs  []string
	elems []elemGlob
}

// CompilePattern checks a glob an LLM or a person wrote and compiles it.
func CompilePattern(pattern string) (*Pattern, error) {
	c, err := Clean(pattern)
	if err != nil {
		return nil, err
	}
	g := &Pattern{segs: strings.Split(c, "/")}
	for _, s := range g.segs {
		e, ok := compileElem(s)
		if !ok {
			return nil, fmt.Errorf("bad pattern '%s'", pattern)
		}
		if e.anyElems && s != "**" {
			e, _ = compileElem("*")
		}
		g.elems = append(g.elems, e)
	}
	return g, nil
}

// Match reports whether the workspace path p (slash form, clean) matches.
func (g *Pattern) Match(p string) bool { return matchElems(g.elems, strings.Split(p, "/")) }

// Glob returns the workspace files matching pattern (see Pattern), sorted;
// folders listings skip (.git, node_modules) only if the pattern names them.
func (w *Workspace) Glob(pattern string) ([]string, error) {
	g, err := CompilePattern(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	// Folders no file below could match are not walked.
	err = w.walk(walkHooks{visit: func(e walkEntry, _ *ignoreDir) bool {
		if e.isDir {
			return (!skippedDirs[e.name] || slices.Contains(g.segs, e.name)) && mayMatchBelow(g.elems, strings.Split(e.path, "/"))
		}
		if g.Match(e.path) {
			out = append(out, e.path)
		}
		return false
	}})
	if err != nil {
		return nil, fmt.Errorf("glob %s: %w", pattern, err)
	}
	slices.Sort(out)
	return out, nil
}
