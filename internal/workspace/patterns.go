package workspace

import (
	"fmt"
	"strings"
)

// Patterns is a list of .gitignore-style patterns from courier's settings
// (what snapshots leave out or force in), matched from the workspace
// folder as the lines of a root .gitignore would be: the last matching
// line decides and "!" negates.
type Patterns struct {
	file ignoreFile
}

// CompilePatterns compiles setting lines. A line that git would never
// match (an unterminated "[", a trailing lone "\") is an error, since a
// person who wrote it in a setting meant something by it.
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

// Match reports whether the list matches the path (slash form, relative
// to the workspace) itself; what is below a matched folder is the
// caller's business, as with .gitignore.
func (p *Patterns) Match(path string, isDir bool) bool {
	if p == nil {
		return false
	}
	r := p.file.match(path, isDir)
	return r != nil && !r.negate
}

// MayMatchInside reports whether some line with a slash could match a
// path inside folder dir, which a walk must then enter though it would
// skip it. Lines without a slash would make every folder worth entering.
func (p *Patterns) MayMatchInside(dir string) bool {
	if p == nil {
		return false
	}
	elems := strings.Split(dir, "/")
	for _, r := range p.file.rules {
		if r.negate {
			continue
		}
		for _, pat := range r.paths {
			if matchesPrefix(pat, elems) {
				return true
			}
		}
	}
	return false
}

// matchesPrefix reports whether pat can match elems followed by at least
// one more element.
func matchesPrefix(pat []elemGlob, elems []string) bool {
	if len(elems) == 0 {
		return len(pat) > 0
	}
	if len(pat) == 0 {
		return false
	}
	if pat[0].anyElems {
		return matchesPrefix(pat[1:], elems) || matchesPrefix(pat, elems[1:])
	}
	return pat[0].match(elems[0]) && matchesPrefix(pat[1:], elems[1:])
}
