package workspace

import (
	"os"
	"path"
	"strings"
	"sync"
)

// maxIgnoreFile is the largest ignore file read; git skips larger ones too.
const maxIgnoreFile = 100 << 20

// GitIgnore returns a function that tells whether a path (slash form,
// relative to the workspace) is ignored the way git would decide it: by the
// root and nested .gitignore files and .git/info/exclude, the deeper file
// and the later line winning, and nothing re-included below an ignored
// folder. Ignore files are read through the workspace root when first
// needed and then remembered, so make one per listing: later edits to them
// are not seen. The function is safe for concurrent use.
func (w *Workspace) GitIgnore() func(p string, isDir bool) bool {
	g := &gitIgnore{
		root:     w.root,
		stacks:   map[string][]*ignoreFile{},
		excluded: map[string]bool{},
	}
	return g.ignored
}

// gitIgnore caches, per folder, the ignore files in force there and
// whether the folder itself is ignored, so a listing reads each .gitignore
// once and tests each folder once.
type gitIgnore struct {
	root     *os.Root
	mu       sync.Mutex
	stacks   map[string][]*ignoreFile
	excluded map[string]bool
	elems    []string
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
	parent := path.Dir(c)
	if parent != "." && g.dirIgnored(parent) {
		return true
	}
	return g.match(g.stack(parent), c, false)
}

// dirIgnored decides a folder: ignored itself or below an ignored folder,
// since git never looks inside an ignored folder to re-include anything.
func (g *gitIgnore) dirIgnored(d string) bool {
	if v, ok := g.excluded[d]; ok {
		return v
	}
	parent := path.Dir(d)
	v := (parent != "." && g.dirIgnored(parent)) || g.match(g.stack(parent), d, true)
	g.excluded[d] = v
	return v
}

// stack returns the ignore files that apply to the entries of folder d,
// lowest precedence first.
func (g *gitIgnore) stack(d string) []*ignoreFile {
	if s, ok := g.stacks[d]; ok {
		return s
	}
	var s []*ignoreFile
	if d == "." {
		s = g.appendFile(s, ".git/info/exclude", 0)
		s = g.appendFile(s, ".gitignore", 0)
	} else {
		parent := g.stack(path.Dir(d))
		// Cut capacity so siblings never share an appended tail.
		s = g.appendFile(parent[:len(parent):len(parent)], d+"/.gitignore", strings.Count(d, "/")+1)
	}
	g.stacks[d] = s
	return s
}

// appendFile adds the ignore file at name if it is a regular file (git does
// not follow a symlinked .gitignore either) with rules in it.
func (g *gitIgnore) appendFile(s []*ignoreFile, name string, depth int) []*ignoreFile {
	info, err := g.root.Lstat(name)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxIgnoreFile {
		return s
	}
	data, err := g.root.ReadFile(name)
	if err != nil {
		return s
	}
	if rules := parseIgnore(data); len(rules) > 0 {
		s = append(s, &ignoreFile{depth: depth, rules: rules})
	}
	return s
}

// match applies the stack to p: the deepest file first and, within a file,
// the last line first; the first rule that matches decides.
func (g *gitIgnore) match(stack []*ignoreFile, p string, isDir bool) bool {
	if len(stack) == 0 {
		return false
	}
	g.elems = splitPath(g.elems[:0], p)
	for i := len(stack) - 1; i >= 0; i-- {
		f := stack[i]
		rel := g.elems[f.depth:]
		for j := len(f.rules) - 1; j >= 0; j-- {
			if f.rules[j].match(rel, isDir) {
				return !f.rules[j].negate
			}
		}
	}
	return false
}

// splitPath appends the elements of a clean slash path to buf.
func splitPath(buf []string, p string) []string {
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return append(buf, p)
		}
		buf = append(buf, p[:i])
		p = p[i+1:]
	}
}
