package workspace

import (
	"fmt"
	"slices"
	"strings"
)

// elemGlob is one path element of a .gitignore pattern, matched byte by
// byte as git's wildmatch does.
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

// compileSet compiles the bracket expression starting p and its length.
// As in git: "!" or "^" first negates, "]" first is literal, "\" escapes,
// "a-z" is a range, "[:alpha:]" a class.
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

// addClass adds the "[:name:]" class starting p. ok is false when the text
// up to the next "]" does not end in ":" (no class); known is false for a
// name git does not know or a "[:" never closed, which fail the pattern.
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

// classes are the POSIX classes git knows, ASCII only, as pairs of bytes
// bounding ranges.
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

// matchElems matches path elements as elemGlob.match matches bytes, a
// "**" element standing for any number of them.
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
