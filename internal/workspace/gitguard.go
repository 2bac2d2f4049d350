package workspace

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// Git runs programs that a repository's settings name, in any repository
// it opens (nested ones, submodules, where a "gitdir:" file leads, common
// folders). Only the person may change what they run: the sandbox shows
// every .git read-only, and PutBackGit undoes what a command changed all
// the same (without a sandbox, or by moving a folder aside).

// maxGitFile bounds a settings file or hook kept in memory: larger ones
// are told apart by size and time only, and cannot be put back.
const maxGitFile = 1 << 20

// programKeys make git run a program (git-config(1)): "s.key", "s.*.key", "s".
var programKeys = []string{
	"core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor",
	"core.askpass", "core.gitproxy", "core.alternaterefscommand", "sequence.editor",
	"diff.external", "diff.*.textconv", "diff.*.command", "merge.*.driver",
	"interactive.difffilter", "remote.*.uploadpack", "remote.*.receivepack", "remote.*.vcs",
	"submodule.*.update", "tar.*.command", "trailer.*.command", "trailer.*.cmd",
	"imap.tunnel", "web.browser", "help.browser", "man.viewer",
	"lfs.*.path", "lfs.*.clean", "lfs.*.smudge",
	// Whole sections name programs or settings files, or (alias) give
	// git options such as -c.
	"include", "includeif", "alias", "pager", "filter", "credential", "gpg",
	"difftool", "mergetool", "browser", "man", "sendemail", "protocol", "instaweb",
}

// gitFileNames can make git run a program, besides each hook in hooks/.
var gitFileNames = []string{"commondir", "config", "config.worktree", "hooks"}

// GitState is every .git and, in each git folder, what can run a program.
type GitState struct {
	dotGits  []string           // every .git, at any depth
	pointers map[string]gitFile // the .git files and links
	// dirs are the folders git reads settings from inside the workspace:
	// the .git folders, where the pointers lead, their common folders.
	dirs map[string]*gitDir
}

// gitDir is a folder git reads settings from: its info, to know it again
// after a command moved it, and its files of gitFileNames and hooks.
type gitDir struct {
	info  fs.FileInfo
	files map[string]gitFile
}

// gitFile is one file as it was: mode, and a regular file's content (when
// big, its size and time) or a link's target.
type gitFile struct {
	mode fs.FileMode
	data string
	big  bool
}

// Git finds every .git, ignored or not, and what can run a program there.
func (w *Workspace) Git() (*GitState, error) {
	g, err := w.findGit()
	if err != nil {
		return nil, err
	}
	for _, p := range g.dotGits {
		g.addDir(w, w.gitDirOf(p, g.pointers), true)
	}
	return g, nil
}

// Paths returns every .git and git folder of g below dir, shown read-only.
func (g *GitState) Paths(dir string) []string {
	ps := slices.Concat(g.dotGits, slices.Collect(maps.Keys(g.dirs)))
	slices.Sort(ps)
	ps = slices.Compact(ps)
	for i, p := range ps {
		ps[i] = filepath.Join(dir, filepath.FromSlash(p))
	}
	return ps
}

// findGit walks for .git folders, files and links, never into them.
func (w *Workspace) findGit() (*GitState, error) {
	g := &GitState{pointers: map[string]gitFile{}, dirs: map[string]*gitDir{}}
	err := w.walk(walkHooks{visit: func(e walkEntry, _ *ignoreDir) bool {
		if isDotGit(e.name) {
			g.dotGits = append(g.dotGits, e.path)
			return false
		}
		return e.isDir
	}})
	if err != nil {
		return nil, fmt.Errorf("look for .git: %w", err)
	}
	slices.Sort(g.dotGits)
	for _, p := range g.dotGits {
		if f, ok := w.readGitFile(p); ok && !f.mode.IsDir() {
			g.pointers[p] = f
		}
	}
	return g, nil
}

// gitDirOf returns the git folder of the .git at p, "" outside.
func (w *Workspace) gitDirOf(p string, pointers map[string]gitFile) string {
	f, ok := pointers[p]
	if !ok {
		return p
	}
	if f.mode.IsRegular() {
		line, _, _ := strings.Cut(f.data, "\n")
		dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return ""
		}
		return w.gitPath(path.Dir(p), dir)
	}
	real, _ := w.resolve(p, true)
	return real
}

// gitPath returns where a path git read in folder dir leads, "" outside.
func (w *Workspace) gitPath(dir, p string) string {
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.dir, filepath.FromSlash(dir), p)
	}
	if p = w.inside(p); p == "" {
		return ""
	}
	real, _ := w.resolve(p, true)
	return real
}

// addDir adds the git folder d, and with common the one its commondir names.
func (g *GitState) addDir(w *Workspace, d string, common bool) {
	if d == "" || g.dirs[d] != nil {
		return
	}
	info, err := w.root.Lstat(d)
	if err != nil || !info.IsDir() {
		return
	}
	gd := &gitDir{info: info, files: map[string]gitFile{}}
	g.dirs[d] = gd
	for _, name := range gitFileNames {
		if f, ok := w.readGitFile(path.Join(d, name)); ok {
			gd.files[name] = f
		}
	}
	if gd.files["hooks"].mode.IsDir() {
		entries, _ := fs.ReadDir(w.root.FS(), path.Join(d, "hooks"))
		for _, e := range entries {
			if name := "hooks/" + e.Name(); !e.Type().IsRegular() || !strings.HasSuffix(name, ".sample") {
				if f, ok := w.readGitFile(path.Join(d, name)); ok {
					gd.files[name] = f
				}
			}
		}
	}
	if c := gd.files["commondir"]; common && c.mode.IsRegular() {
		line, _, _ := strings.Cut(c.data, "\n")
		g.addDir(w, w.gitPath(d, line), false)
	}
}

func (w *Workspace) readGitFile(p string) (gitFile, bool) {
	info, err := w.root.Lstat(p)
	if err != nil {
		return gitFile{}, false
	}
	f := gitFile{mode: info.Mode()}
	switch {
	case f.mode&fs.ModeSymlink != 0:
		f.data, _ = w.root.Readlink(p)
	case f.mode.IsRegular() && info.Size() <= maxGitFile:
		data, err := w.ReadFile(p)
		f.data, f.big = string(data), err != nil
	case f.mode.IsRegular():
		f.big = true
	}
	if f.big {
		f.data = fmt.Sprint(info.Size(), info.ModTime().UnixNano())
	}
	return f, true
}

// runs returns why the file name of a git folder could run a program.
func runs(name string, f gitFile) string {
	switch {
	case name == "config" || name == "config.worktree":
		if !f.mode.IsRegular() || f.big {
			return name + " is not a regular file courier can read"
		}
		if why := riskyConfig([]byte(f.data)); why != "" {
			return name + " " + why
		}
		return ""
	case name == "hooks" && !f.mode.IsDir():
		return "hooks is not a folder"
	case name == "hooks":
		return ""
	case name == "commondir":
		return "commondir makes git read settings from elsewhere"
	}
	return fmt.Sprintf("git would run the hook %s", strconv.Quote(path.Base(name)))
}

// risk returns why git could run a program from the git folder d, or "".
func (d *gitDir) risk() string {
	for _, name := range slices.Sorted(maps.Keys(d.files)) {
		if why := runs(name, d.files[name]); why != "" {
			return why
		}
	}
	return ""
}

// same returns the git folder of g that info is, wherever it was.
func (g *GitState) same(info fs.FileInfo) *gitDir {
	for _, d := range g.dirs {
		if os.SameFile(d.info, info) {
			return d
		}
	}
	return nil
}

// PutBackGit undoes what a command changed since before that can make git
// run a program, and says what it did, a phrase each: a .git file or link
// made or changed is put back (or removed); a new .git folder that runs a
// program is removed, a .git file it replaced put back; in the git folders
// there before, wherever moved, risky settings, hooks and commondir files
// made or changed are put back, or removed if new.
func (w *Workspace) PutBackGit(before *GitState) ([]string, error) {
	now, err := w.findGit()
	if err != nil {
		return nil, err
	}
	var done []string
	for _, p := range now.dotGits {
		f, ok := now.pointers[p]
		old, had := before.pointers[p]
		if !ok || had && old == f {
			continue
		}
		done = append(done, w.putBack(p, old, had)+" (a .git file or link leads git to other settings)")
		delete(now.pointers, p)
	}
	// Common folders are not followed now: commondir is judged itself.
	for _, p := range now.dotGits {
		now.addDir(w, w.gitDirOf(p, now.pointers), false)
	}
	for _, d := range slices.Sorted(maps.Keys(before.dirs)) {
		if info, err := w.root.Lstat(d); err == nil && !info.IsDir() {
			// A link would lead a pointer left as it was elsewhere.
			done = append(done, w.putBack(d, gitFile{}, false)+" (it took the place of a git folder)")
		}
		now.addDir(w, d, false)
	}
	var removed []string
	for _, d := range slices.Sorted(maps.Keys(now.dirs)) {
		if slices.ContainsFunc(removed, func(r string) bool { return strings.HasPrefix(d, r+"/") }) {
			continue
		}
		cur, old := now.dirs[d], before.same(now.dirs[d].info)
		if old == nil && isDotGit(path.Base(d)) {
			why := cur.risk()
			if why == "" {
				continue
			}
			did := w.putBack(d, gitFile{}, false) + ", made by the command (" + why + ")"
			if f, had := before.pointers[d]; had {
				did += ", and " + w.putBack(d, f, true)
			}
			done = append(done, did)
			removed = append(removed, d)
			continue
		}
		if old == nil {
			old = &gitDir{}
		}
		done = append(done, w.settle(d, old, cur)...)
	}
	return done, nil
}

// settle puts back the risky files of git folder d not as in old.
func (w *Workspace) settle(d string, old, cur *gitDir) []string {
	names := slices.Collect(maps.Keys(old.files))
	for name := range cur.files {
		if _, ok := old.files[name]; !ok {
			names = append(names, name)
		}
	}
	// "hooks" before the hooks in it, so they can be put back in it.
	slices.Sort(names)
	var done []string
	hooksMade := false
	for _, name := range names {
		of, had := old.files[name]
		nf, has := cur.files[name]
		why := ""
		switch {
		case has && had && of == nf:
			continue
		case has:
			if why = runs(name, nf); why == "" {
				continue
			}
			if strings.HasPrefix(name, "config") && had {
				// Said of what the command added, where that is enough.
				why = cmp.Or(runs(name, gitFile{mode: nf.mode, data: added(of.data, nf.data)}), why)
			}
		case !hooksMade || !strings.HasPrefix(name, "hooks/"):
			continue // gone: nothing runs
		}
		did := w.putBack(path.Join(d, name), of, had)
		if why != "" {
			did += " (" + why + ")"
		}
		done = append(done, did)
		hooksMade = hooksMade || name == "hooks"
	}
	return done
}

// added returns the lines of now not in old, and the section lines.
func added(old, now string) string {
	was := strings.Split(old, "\n")
	var out []string
	for _, line := range strings.Split(now, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "[") || !slices.Contains(was, line) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// putBack removes what is at p and, if had, makes old again there.
func (w *Workspace) putBack(p string, old gitFile, had bool) string {
	if err := w.root.RemoveAll(p); err != nil {
		return fmt.Sprintf("could not remove '%s': %v", p, err)
	}
	var err error
	switch {
	case !had || old.big:
		return fmt.Sprintf("removed '%s'", p)
	case old.mode.IsDir():
		err = w.root.Mkdir(p, old.mode.Perm())
	case old.mode.IsRegular():
		if err = w.root.WriteFile(p, []byte(old.data), old.mode.Perm()); err == nil {
			err = w.root.Chmod(p, old.mode.Perm())
		}
	case old.mode&fs.ModeSymlink != 0:
		err = w.root.Symlink(old.data, p)
	default:
		return fmt.Sprintf("removed '%s'", p)
	}
	if err != nil {
		return fmt.Sprintf("removed '%s' but could not put it back: %v", p, err)
	}
	return fmt.Sprintf("put back '%s' as it was", p)
}

// riskyConfig returns why settings data could make git run a program, or
// "": a programKeys setting, or a line git might read otherwise.
func riskyConfig(data []byte) string {
	section, sub := "", false
	odd := func(line string) string {
		return fmt.Sprintf("has the line %s, which only git reads for certain", strconv.Quote(human.Cut(line, 60)))
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxGitFile+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			return "continues a line, which only git reads for certain"
		}
		if line[0] == '[' {
			m := sectionLine.FindStringSubmatch(line)
			if m == nil {
				return odd(line)
			}
			section, sub = strings.ToLower(m[1]), m[2] != ""
			continue
		}
		name, _, _ := strings.Cut(line, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !configName(name) || section == "" {
			return odd(line)
		}
		key := section + "." + name
		if sub {
			key = section + ".*." + name
		}
		if slices.Contains(programKeys, key) || slices.Contains(programKeys, section) {
			return "sets " + strings.Replace(key, ".*.", ".", 1)
		}
	}
	if sc.Err() != nil {
		return "has a line too long to read"
	}
	return ""
}

// sectionLine is `[name]` or `[name "sub"]`.
var sectionLine = regexp.MustCompile(`^\[([A-Za-z][A-Za-z0-9-]*)( \s*"[^"\\\]]*"\s*)?\]$`)

// configName reports whether s is letters, digits and '-' after a letter.
func configName(s string) bool {
	return s != "" && s[0] >= 'a' && s[0] <= 'z' && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}
