package workspace_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/workspace"
)

// treeHash sums every name, mode, link target and content under dir, so a
// test can tell that nothing in it changed.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %v", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// gitRepo makes a workspace holding a .git folder with a config, HEAD and
// a hooks folder, and symlinks a reply could have made with a command.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".git/config":                  "[core]\n\tbare = false\n",
		".git/HEAD":                    "ref: refs/heads/main\n",
		".git/hooks/pre-commit.sample": "#!/bin/sh\n",
		"src/main.go":                  "package main\n",
	})
	for link, target := range map[string]string{
		"link":      ".git",
		"cfg":       ".git/config",
		"hooks":     ".git/hooks",
		"src/up":    "..",
		"newhook":   ".git/hooks/pre-commit",
		"deep":      "src",
		"srclink":   "src/main.go",
		"hooksbase": "hooks/..",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestWritesIntoGitAreRefused(t *testing.T) {
	paths := []string{
		".git/config", ".git/HEAD", ".git/hooks/pre-commit", ".git/new/file",
		"./.git/config", "a/../.git/config", `.git\config`,
		".GIT/config", ".Git/hooks/post-checkout", ".git./config", ".git /config", "GIT~1/config",
		".g\u200cit/config", "sub/.git/config", "vendor/x/.git",
		".git",
		"link/config", "link/hooks/pre-commit", "cfg", "hooks/pre-push", "src/up/.git/config",
		"newhook", "hooksbase/config",
	}
	ops := map[string]func(w *workspace.Workspace, p string) error{
		"CheckWrite": (*workspace.Workspace).CheckWrite,
		"WriteFile": func(w *workspace.Workspace, p string) error {
			_, err := w.WriteFile(p, []byte("[core]\n\tfsmonitor = touch /tmp/pwned\n"))
			return err
		},
		"Remove": (*workspace.Workspace).Remove,
	}
	// Removing a link removes the link itself, never what it points to.
	linkOnly := map[string]bool{"cfg": true, "newhook": true}
	for _, p := range paths {
		for name, op := range ops {
			t.Run(name+"/"+p, func(t *testing.T) {
				dir := gitRepo(t)
				before := treeHash(t, filepath.Join(dir, ".git"))
				err := op(openWS(t, dir), p)
				if !workspace.IsProtected(err) && !(linkOnly[p] && name == "Remove") {
					t.Errorf("%s(%q) = %v, want a ProtectedError", name, p, err)
				}
				if after := treeHash(t, filepath.Join(dir, ".git")); after != before {
					t.Errorf(".git changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				if _, err := os.Stat(filepath.Join(dir, ".git/hooks/pre-commit")); err == nil {
					t.Error("a pre-commit hook exists")
				}
			})
		}
	}
}

// TestDotDotIsCleanedBeforeUse shows that "hooks/../config" names the
// workspace's own config, as os.Root is given the cleaned path: the link
// is not followed first.
func TestDotDotIsCleanedBeforeUse(t *testing.T) {
	dir := gitRepo(t)
	before := treeHash(t, filepath.Join(dir, ".git"))
	if _, err := openWS(t, dir).WriteFile("hooks/../config", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "config")); err != nil || string(data) != "x\n" {
		t.Errorf("./config = %q, %v", data, err)
	}
	if after := treeHash(t, filepath.Join(dir, ".git")); after != before {
		t.Errorf(".git changed")
	}
}

func TestProtectedErrorTellsWhatToDo(t *testing.T) {
	w := openWS(t, gitRepo(t))
	_, err := w.WriteFile(".git/config", []byte("x"))
	want := "Path '.git/config' is in .git, which is protected: use git commands, which ask the person"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestRemovingALinkIntoGitLeavesGitAlone(t *testing.T) {
	dir := gitRepo(t)
	before := treeHash(t, filepath.Join(dir, ".git"))
	w := openWS(t, dir)
	if err := w.Remove("cfg"); err != nil {
		t.Fatalf("Remove(cfg) = %v; removing the link itself is allowed", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "cfg")); err == nil {
		t.Error("the link is still there")
	}
	if after := treeHash(t, filepath.Join(dir, ".git")); after != before {
		t.Errorf(".git changed")
	}
}

func TestOrdinaryWritesBesideGitWork(t *testing.T) {
	dir := gitRepo(t)
	w := openWS(t, dir)
	for _, p := range []string{"src/main.go", "src/new.go", ".gitignore", ".github/workflows/ci.yml", "git/x", ".gitx/y", "deep/z.go", "docs/.git-notes"} {
		if _, err := w.WriteFile(p, []byte("x\n")); err != nil {
			t.Errorf("WriteFile(%q) = %v", p, err)
		}
	}
	if err := w.Remove("src/new.go"); err != nil {
		t.Errorf("Remove = %v", err)
	}
	// Reading .git stays allowed.
	if data, err := w.ReadFile(".git/HEAD"); err != nil || !strings.Contains(string(data), "refs/heads/main") {
		t.Errorf("ReadFile(.git/HEAD) = %q, %v", data, err)
	}
}

// A folder a .git file names, at any depth, is a git folder: it holds a
// HEAD, and no file command writes in it.
func TestGitdirPointerTargetIsProtected(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".git":              "gitdir: store/repo\n",
		"store/repo/HEAD":   "ref: refs/heads/main\n",
		"store/repo/config": "[core]\n",
		"store/other.txt":   "free\n",
		"a/b/.git":          "gitdir: ../../modules/b\n",
		"modules/b/HEAD":    "ref: refs/heads/main\n",
	})
	abs := t.TempDir()
	writeTree(t, abs, map[string]string{"repo/config": "[core]\n"})
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		pointer   string
		protected []string
		free      []string
	}{
		{"gitdir: store/repo\n", []string{".git", "store/repo/config", "store/repo/hooks/pre-commit", "a/b/.git", "modules/b/config", "modules/b/hooks/post-checkout"},
			[]string{"store/other.txt", "modules/HEAD2", "a/b/c.txt"}},
		{"gitdir: " + filepath.Join(real, "store/repo") + "\n", []string{"store/repo/config"}, []string{"store/other.txt"}},
		{"gitdir: " + filepath.Join(abs, "repo") + "\n", []string{".git", "store/repo/config"}, []string{"store/other.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.pointer, func(t *testing.T) {
			writeTree(t, dir, map[string]string{".git": tc.pointer})
			w := openWS(t, dir)
			for _, p := range tc.protected {
				if err := w.CheckWrite(p); !workspace.IsProtected(err) {
					t.Errorf("CheckWrite(%q) = %v, want a ProtectedError", p, err)
				}
			}
			for _, p := range tc.free {
				if err := w.CheckWrite(p); err != nil {
					t.Errorf("CheckWrite(%q) = %v, want nil", p, err)
				}
			}
		})
	}
}

func TestGitSymlinkTargetIsProtected(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".repo/config": "[core]\n", ".repo/HEAD": "ref: refs/heads/main\n"})
	if err := os.Symlink(".repo", filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	w := openWS(t, dir)
	if _, err := w.WriteFile(".repo/config", []byte("x")); !workspace.IsProtected(err) {
		t.Errorf("WriteFile(.repo/config) = %v, want a ProtectedError", err)
	}
}

// courier's own folder in a project is neither read nor written by file
// commands, by any name a file system takes for it or through a link, nor
// shown by listings and globs, whose patterns may name it.
func TestCourierFolderIsPrivate(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".courier/courier.toml":        "yes = false\n",
		".courier/sessions/a.json":     "{}\n",
		".courier/inbox/x.txt":         "reply\n",
		"src/main.go":                  "package main\n",
		"src/.courier/note.txt":        "nested\n",
		"docs/courier.txt":             "not courier's\n",
		"docs/.courier-notes/keep.txt": "not courier's\n",
	})
	for link, target := range map[string]string{"in": ".courier", "cfg": ".courier/courier.toml", "src/up": ".."} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	ws := openWS(t, dir)
	before := treeHash(t, filepath.Join(dir, ".courier"))
	for _, p := range []string{
		".courier/courier.toml", ".courier", ".Courier/courier.toml", ".courier./inbox/x.txt", ".co\u200curier/courier.toml",
		"in/courier.toml", "cfg", "src/up/.courier/inbox/x.txt", "src/.courier/note.txt", "a/../.courier/new.txt",
	} {
		if err := ws.CheckWrite(p); !workspace.IsProtected(err) || !strings.Contains(err.Error(), "courier's own folder") {
			t.Errorf("CheckWrite(%q) = %v, want a ProtectedError for .courier", p, err)
		}
		if _, err := ws.WriteFile(p, []byte("sandbox = \"off\"\n")); !workspace.IsProtected(err) {
			t.Errorf("WriteFile(%q) = %v, want a ProtectedError", p, err)
		}
		if _, err := ws.ReadFile(p); !workspace.IsProtected(err) {
			t.Errorf("ReadFile(%q) = %v, want a ProtectedError", p, err)
		}
		if _, err := ws.Stat(p); !workspace.IsProtected(err) {
			t.Errorf("Stat(%q) = %v, want a ProtectedError", p, err)
		}
	}
	if after := treeHash(t, filepath.Join(dir, ".courier")); after != before {
		t.Errorf(".courier changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, p := range []string{"docs/courier.txt", "docs/.courier-notes/keep.txt", "src/main.go"} {
		if _, err := ws.ReadFile(p); err != nil {
			t.Errorf("ReadFile(%q) = %v, want its content", p, err)
		}
	}
	entries, err := ws.List(workspace.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, e := range entries {
		listed = append(listed, e.Path)
	}
	for _, pattern := range []string{"**", ".courier/**", "**/*.json", "**/*.txt", "*/.courier/*"} {
		matches, err := ws.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, matches...)
	}
	for _, p := range listed {
		if strings.Contains(strings.ToLower(p), ".courier/") {
			t.Errorf("%s listed", p)
		}
	}
	if !slices.Contains(listed, "docs/.courier-notes/keep.txt") {
		t.Errorf("listing %q lacks a folder merely named like courier's", listed)
	}
}
