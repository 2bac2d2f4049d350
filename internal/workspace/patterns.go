package workspace

import (
	"fmt"
	"slices"
	"strings"
)

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

// Match reports whether the list matches the workspace path itself (what
// is below a matched folder is the caller's business).
func (p *Patterns) Match(path string, isDir bool) bool {
	if p == nil {
		return false
	}
	r := p.file.match(path, isDir)
	return r != nil && !r.negate
}

// MayMatchInside reports whether a line with a slash could match a path
// inside dir, which a walk must then enter (lines without one are not
// counted: they would make every folder worth entering).
func (p *Patterns) MayMatchInside(dir string) bool {
	if p == nil {
		return false
	}
	elems := strings.Split(dir, "/")
	return slices.ContainsFunc(p.file.rules, func(r ignoreRule) bool {
		return !r.negate && slices.ContainsFunc(r.paths, func(pat []elemGlob) bool { return mayMatchBelow(pat, elems) })
	})
}
