package workspace

import (
	"fmt"
	"slices"
	"strings"
)

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
