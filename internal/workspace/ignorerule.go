package workspace

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	// name is the pattern of a rule without a slash, which matches the
	// last element of a path at any depth below the file's folder.
	name *elemGlob
	// paths are the element patterns of a rule with a slash, matched from
	// the file's folder; a path matching any of them matches.
	paths   [][]elemGlob
	negate  bool
	dirOnly bool
}

// ignoreFile holds the rules of one ignore file.
type ignoreFile struct {
	// base is the length of the file's folder's path with its slash (0 at
	// the root): the rules see paths from there.
	base  int
	rules []ignoreRule
}

// match returns the last rule of f that matches p, a path from the
// workspace folder, or nil.
func (f *ignoreFile) match(p string, isDir bool) *ignoreRule {
	elems := strings.Split(p[f.base:], "/")
	for i := len(f.rules) - 1; i >= 0; i-- {
		if f.rules[i].match(elems, isDir) {
			return &f.rules[i]
		}
	}
	return nil
}

// What courier uses of one ignore file, so that a hostile one costs a
// listing little (a .gitignore of 25 MB made every turn take minutes; real
// ones hold a few KB): its first MB, its first 10,000 patterns, and no
// line longer than 4,096 bytes, the longest path Linux takes (PATH_MAX).
// Matching a path then costs at most the 10,000 patterns, each linear in
// its length times the path's (see elemGlob.match).
const (
	maxIgnoreBytes = 1 << 20
	maxIgnoreRules = 10_000
	maxIgnoreLine  = 4096
)

// IgnoreCutNote says, for a person or an LLM, that courier uses only the
// first patterns of the ignore file at p.
func IgnoreCutNote(p string, patterns int) string {
	n := human.Count(patterns, "pattern", "")
	if patterns > 1 {
		n = human.Thousands(patterns) + " patterns"
	}
	return fmt.Sprintf("courier uses only the first %s of %s: it reads at most 1 MB and 10,000 patterns of an ignore file, and no line longer than 4,096 bytes; files the rest would leave out are listed",
		n, p)
}

// readIgnore reads what parseIgnore may use of an ignore file, and a byte
// more to tell it there is more.
func readIgnore(r io.Reader) []byte {
	data, _ := io.ReadAll(io.LimitReader(r, maxIgnoreBytes+1))
	return data
}

// parseIgnore compiles an ignore file's lines, keeping only those that can
// match something, within the bounds above; cut tells that some of data
// was left unused for them.
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

// parseRule compiles one line the way git reads it: "#" starts a comment,
// trailing spaces go unless escaped, "!" negates, a trailing "/" means
// folders only, a slash anywhere else anchors the pattern to the file's
// folder.
func parseRule(line string) (ignoreRule, bool) {
	var r ignoreRule
	if line == "" || line[0] == '#' {
		return r, false
	}
	line = trimTrailingSpaces(line)
	if line == "" {
		return r, false
	}
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = line[:len(line)-1]
	}
	if line == "" {
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

// compilePath compiles the elements of a pattern with a slash.
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
// p. Git compares the literal start of a pattern separately and runs its
// matcher on the rest, so a "**" right after a literal start that does not
// end in "/" ("b**/x") counts as a leading "**": it matches across folders,
// and "**/" may match nothing at all ("bx"). Other patterns have one form.
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

// splitPattern splits a pattern into elements at its slashes, an escaped
// "\/" included, but not at a slash inside "[...]": git's matcher reads the
// whole pattern at once, so such a bracket is one piece of one element.
// escaped[i] tells that part i ended at an escaped slash.
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
	cut := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if cut < 0 {
				cut = i
			}
		case '\\':
			i++
			cut = -1
		default:
			cut = -1
		}
	}
	if cut >= 0 {
		return s[:cut]
	}
	return s
}

// match reports whether the rule matches a path given as its elements
// relative to the rule's file.
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
