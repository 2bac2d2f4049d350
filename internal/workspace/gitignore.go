package workspace

import (
	"os"
	"path"
	"strings"
	"sync"
)

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
		s = g.appendFile(s, ".git/info/exclude", 0, nil)
		s = g.appendFile(s, ".gitignore", 0, nil)
	} else {
		parent := g.stack(path.Dir(d))
		// Cut capacity so siblings never share an appended tail.
		s = g.appendFile(parent[:len(parent):len(parent)], d+"/.gitignore", strings.Count(d, "/")+1, nil)
	}
	g.stacks[d] = s
	return s
}

// appendFile adds the ignore file at name if it is a regular file (git does
// not follow a symlinked .gitignore either) with rules in it. cut, when
// set, is told of a file courier uses only part of.
func (g *gitIgnore) appendFile(s []*ignoreFile, name string, depth int, cut func(string, int)) []*ignoreFile {
	info, err := g.root.Lstat(name)
	if err != nil || !info.Mode().IsRegular() {
		return s
	}
	f, err := g.root.Open(name)
	if err != nil {
		return s
	}
	defer f.Close()
	if rules := parse(name, readIgnore(f), cut); len(rules) > 0 {
		s = append(s, &ignoreFile{depth: depth, rules: rules})
	}
	return s
}

// parse is parseIgnore of the ignore file name, telling cut, when set, if
// only part of it is used.
func parse(name string, data []byte, cut func(string, int)) []ignoreRule {
	rules, partly := parseIgnore(data)
	if partly && cut != nil {
		cut(name, len(rules))
	}
	return rules
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

// ignoreDir is what the ignore files say in one folder of a walk: the files
// in force there, lowest precedence first. A walk never enters an ignored
// folder, so only the entry itself is left to decide.
type ignoreDir struct {
	files []*ignoreFile
}

// enterIgnore is a walk's enter hook that follows .gitignore files: the
// root's .git/info/exclude and .gitignore, then each folder's .gitignore,
// read from the folder the walk has open. cut, when set, is told of each
// ignore file courier uses only part of.
func (w *Workspace) enterIgnore(dir string, parent *ignoreDir, read func(name string) []byte, cut func(string, int)) *ignoreDir {
	var files []*ignoreFile
	if parent == nil {
		// Read through the root, since .git may be a symlink.
		g := &gitIgnore{root: w.root}
		files = g.appendFile(nil, ".git/info/exclude", 0, cut)
	} else {
		files = parent.files[:len(parent.files):len(parent.files)]
	}
	if data := read(".gitignore"); data != nil {
		if rules := parse(path.Join(dir, ".gitignore"), data, cut); len(rules) > 0 {
			f := &ignoreFile{rules: rules}
			if dir != "" {
				f.base = len(dir) + 1
			}
			files = append(files, f)
		}
	}
	if parent != nil && len(files) == len(parent.files) {
		return parent
	}
	return &ignoreDir{files: files}
}

// ignored decides the entry p (named name) of the folder: the deepest file
// first and, within a file, the last line first; the first rule that
// matches decides. Rules with a slash see the path from their file's
// folder, split only when such a rule is reached.
func (d *ignoreDir) ignored(p, name string, isDir bool) bool {
	if d == nil {
		return false
	}
	var elems []string
	for i := len(d.files) - 1; i >= 0; i-- {
		f := d.files[i]
		elems = elems[:0]
		for j := len(f.rules) - 1; j >= 0; j-- {
			r := &f.rules[j]
			if r.dirOnly && !isDir {
				continue
			}
			var m bool
			if r.name != nil {
				m = r.name.match(name)
			} else {
				if len(elems) == 0 {
					elems = splitPath(elems, p[f.base:])
				}
				m = r.match(elems, isDir)
			}
			if m {
				return !r.negate
			}
		}
	}
	return false
}
