package workspace

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// IsGlob reports whether a path holds glob characters.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// Pattern is a compiled glob: besides the usual "*", "?" and "[...]"
// (negated by "!" or "^") within one path segment, a "**" segment matches
// any number of folders, as in .gitignore and most editors.
type Pattern struct {
	segs []string
	m    *segMatcher
}

// CompilePattern checks a glob an LLM or a person wrote and compiles it.
func CompilePattern(pattern string) (*Pattern, error) {
	c, err := Clean(pattern)
	if err != nil {
		return nil, err
	}
	segs := strings.Split(c, "/")
	for i, s := range segs {
		segs[i] = shellSets(s)
		if _, err := path.Match(segs[i], ""); err != nil {
			return nil, fmt.Errorf("bad pattern '%s': %w", pattern, err)
		}
	}
	return &Pattern{segs: segs, m: newSegMatcher(segs)}, nil
}

// Match reports whether the workspace path p (slash form, clean) matches.
func (g *Pattern) Match(p string) bool {
	st := g.m.start()
	for rest := p; ; {
		name, tail, more := strings.Cut(rest, "/")
		st = g.m.step(st, name)
		if !more {
			return g.m.done(st)
		}
		if !g.m.more(st) {
			return false
		}
		rest = tail
	}
}

// Glob returns the workspace files matching pattern (see Pattern), sorted.
// Folders that listings always skip (.git, node_modules, ...) are skipped
// here too unless the pattern names them.
func (w *Workspace) Glob(pattern string) ([]string, error) {
	g, err := CompilePattern(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	m := g.m
	// The states each walked folder reached, so that every entry is
	// matched from its folder's states: one step per entry, whatever its
	// depth. Folders no file below could match are not walked.
	states := map[string]segStates{"": m.start()}
	err = w.walk(walkHooks{visit: func(e walkEntry, _ *ignoreDir) bool {
		parent := ""
		if len(e.path) > len(e.name) {
			parent = e.path[:len(e.path)-len(e.name)-1]
		}
		st := m.step(states[parent], e.name)
		if e.isDir {
			if skippedDirs[e.name] && !slices.Contains(g.segs, e.name) || !m.more(st) {
				return false
			}
			states[e.path] = st
			return true
		}
		if m.done(st) {
			out = append(out, e.path)
		}
		return false
	}})
	if err != nil {
		return nil, fmt.Errorf("glob %s: %w", pattern, err)
	}
	sort.Strings(out)
	return out, nil
}

// segMatcher matches paths segment by segment against pattern segments,
// where "**" stands for zero or more segments, by tracking the set of
// pattern positions a path can have reached (an NFA): linear in the
// pattern's length per segment, however many "**" it holds.
type segMatcher struct{ pat []string }

// segStates is a set of pattern positions, 0 to len(pat).
type segStates []bool

func newSegMatcher(pat []string) *segMatcher { return &segMatcher{pat: pat} }

func (m *segMatcher) start() segStates {
	st := make(segStates, len(m.pat)+1)
	st[0] = true
	return m.closure(st)
}

// closure adds the positions after each "**", which may match nothing.
func (m *segMatcher) closure(st segStates) segStates {
	for i, p := range m.pat {
		if st[i] && p == "**" {
			st[i+1] = true
		}
	}
	return st
}

// step returns the positions reached after matching name from st.
func (m *segMatcher) step(st segStates, name string) segStates {
	next := make(segStates, len(m.pat)+1)
	for i, p := range m.pat {
		if !st[i] {
			continue
		}
		if p == "**" {
			next[i] = true
		} else if ok, _ := path.Match(p, name); ok {
			next[i+1] = true
		}
	}
	return m.closure(next)
}

// done reports whether the whole pattern was matched.
func (m *segMatcher) done(st segStates) bool { return st[len(m.pat)] }

// more reports whether some of the pattern is left to match deeper paths.
func (m *segMatcher) more(st segStates) bool { return slices.Contains(st[:len(m.pat)], true) }

// shellSets turns the shell's negated set "[!...]" into path.Match's
// "[^...]": LLMs write shell globs, and path.Match would read the "!" as a
// member of the set.
func shellSets(seg string) string {
	if !strings.Contains(seg, "[!") {
		return seg
	}
	b := []byte(seg)
	inSet := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\':
			i++
		case !inSet && b[i] == '[':
			inSet = true
			if i+1 < len(b) && b[i+1] == '!' {
				b[i+1] = '^'
				i++
			}
		case inSet && b[i] == ']':
			inSet = false
		}
	}
	return string(b)
}
