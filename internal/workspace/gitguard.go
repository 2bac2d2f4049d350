package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// A command may make a repository where the workspace had none (`git
// init`), and nothing keeps .git read-only while it does, since there was
// no .git to protect. What git reads from .git can run programs the next
// time the person types a git command outside the sandbox: settings
// (core.fsmonitor, core.hooksPath, aliases, filters, include), hooks, and
// pointers to another folder's settings (a "gitdir:" file, commondir). So
// a repository a command made must look like what `git init` makes, with
// only settings that run nothing; NewRepositoryRisk says why not.

// maxRepoConfig bounds the settings file read: `git init` writes a few
// hundred bytes.
const maxRepoConfig = 64 << 10

// safeRepoKeys are the settings a new repository may hold ("section.key",
// or "section.*.key" for any subsection), lower case: what `git init`
// writes, who the person is, and which branch follows which.
var safeRepoKeys = []string{
	"core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
	"core.ignorecase", "core.precomposeunicode", "core.symlinks",
	"extensions.objectformat", "extensions.refstorage",
	"user.name", "user.email", "init.defaultbranch",
	"branch.*.remote", "branch.*.merge",
}

// NewRepositoryRisk looks at the workspace's .git, which a command has just
// made, and returns why git could run a program from it ("" when it could
// not): anything but a folder, a pointer to other settings, a hook that is
// not one of git's inactive samples, a setting beyond safeRepoKeys, or a
// settings file that cannot be read plainly. A missing .git is no risk.
func (w *Workspace) NewRepositoryRisk() (string, error) {
	info, err := w.root.Lstat(".git")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("look at .git: %w", err)
	case !info.IsDir():
		return "it is not a folder (a pointer or link to another repository's settings)", nil
	}
	for _, name := range []string{"commondir", "config.worktree"} {
		if _, err := w.root.Lstat(".git/" + name); err == nil {
			return fmt.Sprintf("it has a %s file, which makes git read settings from elsewhere", name), nil
		}
	}
	if why, err := w.sampleHooksOnly(); why != "" || err != nil {
		return why, err
	}
	return w.plainRepoConfig()
}

// sampleHooksOnly returns why .git/hooks could run something: anything in
// it but regular files named *.sample, which git never runs.
func (w *Workspace) sampleHooksOnly() (string, error) {
	info, err := w.root.Lstat(".git/hooks")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("look at .git/hooks: %w", err)
	case !info.IsDir():
		return "its hooks are not a folder", nil
	}
	entries, err := fs.ReadDir(w.root.FS(), ".git/hooks")
	if err != nil {
		return "", fmt.Errorf("list .git/hooks: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".sample") {
			return fmt.Sprintf("it has the hook %s, which git would run", strconv.Quote(e.Name())), nil
		}
	}
	return "", nil
}

// plainRepoConfig returns why .git/config could make git run something:
// a setting outside safeRepoKeys, or a line this reading does not take
// for certain (a continued line, a setting on a section's line, an odd
// name), since git might read it differently.
func (w *Workspace) plainRepoConfig() (string, error) {
	info, err := w.root.Lstat(".git/config")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("look at .git/config: %w", err)
	case !info.Mode().IsRegular():
		return "its settings file is not a regular file", nil
	case info.Size() > maxRepoConfig:
		return "its settings file is larger than git init makes it", nil
	}
	f, err := w.root.Open(".git/config")
	if err != nil {
		return "", fmt.Errorf("read .git/config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRepoConfig+1))
	if err != nil {
		return "", fmt.Errorf("read .git/config: %w", err)
	}
	return riskyRepoConfig(data), nil
}

// riskyRepoConfig returns why the settings data could make git run a
// program, or "".
func riskyRepoConfig(data []byte) string {
	section, sub := "", false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxRepoConfig+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			return "its settings file continues a line, which only git reads for certain"
		}
		if line[0] == '[' {
			var ok bool
			section, sub, ok = repoSection(line)
			if !ok {
				return fmt.Sprintf("its settings file has the line %s, which only git reads for certain", strconv.Quote(human.Cut(line, 60)))
			}
			continue
		}
		name, _, _ := strings.Cut(line, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !configName(name) || section == "" {
			return fmt.Sprintf("its settings file has the line %s, which only git reads for certain", strconv.Quote(human.Cut(line, 60)))
		}
		key := section + "." + name
		if sub {
			key = section + ".*." + name
		}
		if !slices.Contains(safeRepoKeys, key) {
			return fmt.Sprintf("its settings set %s, which a repository made by git init does not", strings.Replace(key, ".*.", ".", 1))
		}
	}
	if sc.Err() != nil {
		return "its settings file has a line too long to read"
	}
	return ""
}

// repoSection reads a section line, `[name]` or `[name "subsection"]` with
// nothing after it, and returns the name in lower case and whether a
// subsection was given.
func repoSection(line string) (string, bool, bool) {
	inner, ok := strings.CutPrefix(line, "[")
	if !ok {
		return "", false, false
	}
	inner, ok = strings.CutSuffix(inner, "]")
	if !ok {
		return "", false, false
	}
	name, rest, hasSub := strings.Cut(inner, " ")
	name = strings.ToLower(name)
	if !configName(name) {
		return "", false, false
	}
	if !hasSub {
		return name, false, true
	}
	rest = strings.TrimSpace(rest)
	if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' || strings.ContainsAny(rest[1:len(rest)-1], "\"\\]") {
		return "", false, false
	}
	return name, true, true
}

// configName reports whether s is a plain setting or section name:
// letters, digits and '-', starting with a letter.
func configName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// HasRepository reports whether the workspace has a .git of any kind (a
// folder, a file, a link, even a broken one).
func (w *Workspace) HasRepository() bool {
	_, err := w.root.Lstat(".git")
	return err == nil
}

// RemoveRepository removes the workspace's .git, whatever it is.
func (w *Workspace) RemoveRepository() error {
	if err := w.root.RemoveAll(".git"); err != nil {
		return fmt.Errorf("remove .git: %w", err)
	}
	return nil
}
