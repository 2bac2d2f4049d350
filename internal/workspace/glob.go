package workspace

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
)

// IsGlob reports whether a path holds glob characters.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// Glob returns the workspace files matching pattern, sorted. Besides the
// usual "*", "?" and "[...]" (negated by "!" or "^") within one path
// segment, a "**" segment matches any number of folders, as in .gitignore
// and most editors. Folders that
// listings always skip (.git, node_modules, ...) are skipped here too unless
// the pattern names them.
func (w *Workspace) Glob(pattern string) ([]string, error) {
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
	var out []string
	err = fs.WalkDir(w.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil
		}
		if d.IsDir() {
			if skippedDirs[d.Name()] && !slices.Contains(segs, d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if matchSegments(segs, strings.Split(p, "/")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("glob %s: %w", pattern, err)
	}
	sort.Strings(out)
	return out, nil
}

// matchSegments matches path segments against pattern segments, where "**"
// stands for zero or more segments. Memoised so that many "**" stay linear
// in the product of the two lengths.
func matchSegments(pat, name []string) bool {
	memo := make(map[[2]int]bool)
	var match func(i, j int) bool
	match = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var r bool
		switch {
		case i == len(pat):
			r = j == len(name)
		case pat[i] == "**":
			r = match(i+1, j) || (j < len(name) && match(i, j+1))
		case j == len(name):
			r = false
		default:
			ok, _ := path.Match(pat[i], name[j])
			r = ok && match(i+1, j+1)
		}
		memo[key] = r
		return r
	}
	return match(0, 0)
}

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
