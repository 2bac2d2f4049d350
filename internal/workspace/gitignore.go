package workspace

import (
	"path"
	"strings"
	"sync"
)

// GitIgnore returns a function telling whether a workspace path is ignored
// as git decides it. Ignore files are read once, when first needed: make
// one per listing. It is safe for concurrent use.
func (w *Workspace) GitIgnore() func(p string, isDir bool) bool {
	g := &gitIgnore{w: w, dirs: map[string]*ignoreDir{}, excluded: map[string]bool{}}
	return g.ignored
}

type gitIgnore struct {
	w        *Workspace
	mu       sync.Mutex
	dirs     map[string]*ignoreDir // "" is the workspace folder
	excluded map[string]bool
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
	return g.decide(c, false)
}

// dirIgnored decides a folder, once.
func (g *gitIgnore) dirIgnored(d string) bool {
	v, ok := g.excluded[d]
	if !ok {
		v = g.decide(d, true)
		g.excluded[d] = v
	}
	return v
}

// decide: p is ignored when its folder is (git never looks inside one to
// re-include anything) or its folder's ignore files say so.
func (g *gitIgnore) decide(p string, isDir bool) bool {
	parent := parentDir(p)
	return parent != "" && g.dirIgnored(parent) || g.dir(parent).ignored(p, isDir)
}

// dir returns what the ignore files say in the folder d.
func (g *gitIgnore) dir(d string) *ignoreDir {
	if x, ok := g.dirs[d]; ok {
		return x
	}
	var parent *ignoreDir
	if d != "" {
		parent = g.dir(parentDir(d))
	}
	x := g.w.enterIgnore(d, parent, func(name string) []byte { return g.w.readIgnoreFile(path.Join(d, name)) }, nil)
	g.dirs[d] = x
	return x
}

// parentDir is the folder of p, "" for the workspace folder.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// readIgnoreFile reads the ignore file p if it is a regular file: git does
// not follow a linked .gitignore either.
func (w *Workspace) readIgnoreFile(p string) []byte {
	if info, err := w.root.Lstat(p); err != nil || !info.Mode().IsRegular() {
		return nil
	}
	f, _, err := w.OpenRegular(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	return readIgnore(f)
}

// ignoreDir holds the ignore files in force in a folder, lowest
// precedence first.
type ignoreDir struct {
	files []*ignoreFile
}

// enterIgnore is a walk's enter hook that follows ignore files: the
// root's .git/info/exclude, then each folder's .gitignore. cut, when set,
// is told of each ignore file used only in part.
func (w *Workspace) enterIgnore(dir string, parent *ignoreDir, read func(name string) []byte, cut func(string, int)) *ignoreDir {
	d := &ignoreDir{}
	if parent == nil {
		// Read through the root, since .git may be a symlink.
		d.add(".git/info/exclude", 0, w.readIgnoreFile(".git/info/exclude"), cut)
	} else {
		d.files = parent.files[:len(parent.files):len(parent.files)]
	}
	base := 0
	if dir != "" {
		base = len(dir) + 1
	}
	if data := read(".gitignore"); data != nil {
		d.add(path.Join(dir, ".gitignore"), base, data, cut)
	}
	if parent != nil && len(d.files) == len(parent.files) {
		return parent
	}
	return d
}

// add adds the rules of the ignore file name; base is its folder's path
// length with the slash.
func (d *ignoreDir) add(name string, base int, data []byte, cut func(string, int)) {
	rules, partly := parseIgnore(data)
	if partly && cut != nil {
		cut(name, len(rules))
	}
	if len(rules) > 0 {
		d.files = append(d.files, &ignoreFile{base: base, rules: rules})
	}
}

// ignored decides the entry p: the deepest file with a matching rule.
func (d *ignoreDir) ignored(p string, isDir bool) bool {
	if d == nil {
		return false
	}
	for i := len(d.files) - 1; i >= 0; i-- {
		if r := d.files[i].match(p, isDir); r != nil {
			return !r.negate
		}
	}
	return false
}
