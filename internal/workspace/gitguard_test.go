package workspace_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A repository as 'git init' makes it, and as a person configures it, is
// kept; whatever could make the person's git run a program is not.
func TestNewRepositoryRisk(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed to make a real repository; .ci/run installs it")
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		risk  string // part of the reason, "" for none
	}{
		{"no .git", func(t *testing.T, dir string) {}, ""},
		{"git init", func(t *testing.T, dir string) { run(t, dir, git, "init", "-q") }, ""},
		{"git init with a name and a branch", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q", "-b", "main")
			run(t, dir, git, "config", "user.name", "A Person")
			run(t, dir, git, "config", "user.email", "a@example.com")
			run(t, dir, git, "config", "branch.main.remote", "origin")
		}, ""},
		{"fsmonitor", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			run(t, dir, git, "config", "core.fsmonitor", "touch pwned")
		}, "core.fsmonitor"},
		{"an alias", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			run(t, dir, git, "config", "alias.st", "!touch pwned")
		}, "alias.st"},
		{"hooksPath in upper case", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[CORE]\n\tHooksPath = hooks\n")
		}, "core.hookspath"},
		{"a setting on the section's line", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[core] fsmonitor = touch pwned\n")
		}, `"[core] fsmonitor`},
		{"a continued line", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[user]\n\tname = a \\\n\tfsmonitor\n")
		}, "continues a line"},
		{"an include", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[include]\n\tpath = ../evil\n")
		}, "include.path"},
		{"a filter for a subsection", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[filter \"x\"]\n\tclean = touch pwned\n")
		}, "filter.clean"},
		{"a hook", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			appendFile(t, filepath.Join(dir, ".git/hooks/pre-commit"), "#!/bin/sh\ntouch pwned\n")
		}, `hook "pre-commit"`},
		{"a hook named like a sample but a link", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			if err := os.Symlink("/bin/true", filepath.Join(dir, ".git/hooks/x.sample")); err != nil {
				t.Fatal(err)
			}
		}, `hook "x.sample"`},
		{"a pointer file", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git"), "gitdir: elsewhere\n")
		}, "not a folder"},
		{"a link", func(t *testing.T, dir string) {
			if err := os.Symlink("elsewhere", filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
		}, "not a folder"},
		{"commondir", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			appendFile(t, filepath.Join(dir, ".git/commondir"), "../evil\n")
		}, "commondir"},
		{"config is a link", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../evil.cfg", filepath.Join(dir, ".git/config")); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			ws := openWS(t, dir)
			risk, err := ws.NewRepositoryRisk()
			if err != nil {
				t.Fatal(err)
			}
			if tc.risk == "" && risk != "" || tc.risk != "" && !strings.Contains(risk, tc.risk) {
				t.Fatalf("risk %q, want one naming %q", risk, tc.risk)
			}
			if risk == "" {
				return
			}
			if err := ws.RemoveRepository(); err != nil {
				t.Fatal(err)
			}
			if ws.HasRepository() {
				t.Fatal(".git is still there after RemoveRepository")
			}
		})
	}
}

func run(t *testing.T, dir, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", prog, args, err, out)
	}
}

func appendFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
