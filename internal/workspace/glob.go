package workspace

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// IsGlob reports whether a path holds glob characters.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// Pattern is a compiled glob: "*", "?" and "[...]" (negated by "!" or
// "^") within one segment, and a "**" segment for any number of folders.
type Pattern struct{ segs []string }

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
	return &Pattern{segs: segs}, nil
}

// Match reports whether the workspace path p (slash form, clean) matches.
func (g *Pattern) Match(p string) bool {
	st := g.start()
	for _, name := range strings.Split(p, "/") {
		if !g.more(st) {
			return false
		}
		st = g.step(st, name)
	}
	return g.done(st)
}

// Glob returns the workspace files matching pattern (see Pattern), sorted;
// folders listings skip (.git, node_modules) only if the pattern names them.
func (w *Workspace) Glob(pattern string) ([]string, error) {
	g, err := CompilePattern(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	// Each entry is matched from its folder's states, one step whatever
	// its depth; folders no file below could match are not walked.
	states := map[string][]bool{"": g.start()}
	err = w.walk(walkHooks{visit: func(e walkEntry, _ *ignoreDir) bool {
		st := g.step(states[parentDir(e.path)], e.name)
		if e.isDir {
			if skippedDirs[e.name] && !slices.Contains(g.segs, e.name) || !g.more(st) {
				return false
			}
			states[e.path] = st
			return true
		}
		if g.done(st) {
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

// The matcher tracks the set of pattern positions a path can have reached
// (an NFA), so it stays linear however many "**" a pattern holds.

func (g *Pattern) start() []bool {
	st := make([]bool, len(g.segs)+1)
	st[0] = true
	return g.closure(st)
}

// closure adds the positions after each "**", which may match nothing.
func (g *Pattern) closure(st []bool) []bool {
	for i, p := range g.segs {
		if st[i] && p == "**" {
			st[i+1] = true
		}
	}
	return st
}

// step returns the positions reached after matching name from st.
func (g *Pattern) step(st []bool, name string) []bool {
	next := make([]bool, len(g.segs)+1)
	for i, p := range g.segs {
		if !st[i] {
			continue
		}
		if p == "**" {
			next[i] = true
		} else if ok, _ := path.Match(p, name); ok {
			next[i+1] = true
		}
	}
	return g.closure(next)
}

func (g *Pattern) done(st []bool) bool { return st[len(g.segs)] }

// more reports whether deeper paths may still match.
func (g *Pattern) more(st []bool) bool { return slices.Contains(st[:len(g.segs)], true) }

// shellSets turns the shell's negated set "[!...]", which LLMs write, into
// path.Match's "[^...]".
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
