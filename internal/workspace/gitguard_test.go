package workspace_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// A command may leave repositories as git makes them and as the person
// configured them, at any depth; whatever it changed that could make the
// person's git run a program is put back, or removed if it made it.
func TestPutBackGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed to make real repositories; .ci/run installs it")
	}
	hook := "#!/bin/sh\ntouch pwned\n"
	// The person's workspace: a repository with a hook and hooksPath of
	// their own, a submodule, and a nested repository.
	person := func(t *testing.T, dir string) {
		run(t, dir, git, "init", "-q")
		run(t, dir, git, "config", "core.hooksPath", ".husky")
		run(t, dir, git, "init", "-q", "nested")
		run(t, filepath.Join(dir, "nested"), git, "config", "alias.st", "status")
		writeTree(t, dir, map[string]string{
			".git/hooks/pre-push":         "#!/bin/sh\nexit 0\n",
			".git/modules/sub/HEAD":       "ref: refs/heads/main\n",
			".git/modules/sub/config":     "[core]\n\tbare = false\n",
			"lib/sub/.git":                "gitdir: ../../.git/modules/sub\n",
			"nested/.git/hooks/pre-merge": "#!/bin/sh\nexit 0\n",
		})
	}
	tests := []struct {
		name    string
		person  func(t *testing.T, dir string)
		command func(t *testing.T, dir string)
		done    []string // parts of what PutBackGit says, in order; none for nothing
		gone    []string // paths that must not exist afterwards
		same    []string // paths that must be as the person left them
	}{
		{"nothing changed", person, func(t *testing.T, dir string) {}, nil, nil,
			[]string{".git/config", ".git/hooks/pre-push", "lib/sub/.git", "nested/.git/config"}},
		{"a plain git init and a remote, nested", person, func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q", "fresh")
			run(t, filepath.Join(dir, "fresh"), git, "remote", "add", "origin", "https://example.com/x.git")
			run(t, filepath.Join(dir, "fresh"), git, "config", "user.name", "A Person")
		}, nil, nil, nil},
		{"git init with fsmonitor, nested", person, func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q", "a/b")
			run(t, filepath.Join(dir, "a/b"), git, "config", "core.fsmonitor", "touch pwned")
		}, []string{"removed 'a/b/.git', made by the command (config sets core.fsmonitor)"}, []string{"a/b/.git"}, nil},
		{"a repository written file by file", person, func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"deep/er/.git/HEAD": "ref: refs/heads/main\n", "deep/er/.git/objects/": "", "deep/er/.git/refs/": "",
				"deep/er/.git/config": "[core] fsmonitor = touch pwned\n"})
		}, []string{`removed 'deep/er/.git', made by the command (config has the line "[core] fsmonitor`}, []string{"deep/er/.git"}, nil},
		{"a hook in a new repository", person, func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q", "h")
			appendFile(t, filepath.Join(dir, "h/.git/hooks/post-checkout"), hook)
		}, []string{`removed 'h/.git', made by the command (git would run the hook "post-checkout")`}, nil, nil},
		{"a hook in the person's nested repository", person, func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, "nested/.git/hooks/pre-commit"), hook)
			appendFile(t, filepath.Join(dir, "nested/.git/hooks/pre-merge"), "touch pwned\n")
		}, []string{`removed 'nested/.git/hooks/pre-commit' (git would run the hook "pre-commit")`,
			`put back 'nested/.git/hooks/pre-merge' as it was (git would run the hook "pre-merge")`},
			[]string{"nested/.git/hooks/pre-commit"}, []string{"nested/.git/hooks/pre-merge", "nested/.git/config"}},
		{"fsmonitor in the person's nested settings", person, func(t *testing.T, dir string) {
			run(t, filepath.Join(dir, "nested"), git, "config", "core.fsmonitor", "touch pwned")
		}, []string{"put back 'nested/.git/config' as it was (config sets core.fsmonitor)"}, nil, []string{"nested/.git/config"}},
		{"fsmonitor in the person's own settings", person, func(t *testing.T, dir string) {
			run(t, dir, git, "config", "core.fsmonitor", "touch pwned")
		}, []string{"put back '.git/config' as it was (config sets core.fsmonitor)"}, nil, []string{".git/config"}},
		{"an include in a submodule's settings", person, func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/modules/sub/config"), "[include]\n\tpath = ../../../evil\n")
		}, []string{"put back '.git/modules/sub/config' as it was (config sets include.path)"}, nil, []string{".git/modules/sub/config"}},
		{"a submodule's .git file replaced by a repository", person, func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "lib/sub/.git")); err != nil {
				t.Fatal(err)
			}
			run(t, filepath.Join(dir, "lib/sub"), git, "init", "-q")
			run(t, filepath.Join(dir, "lib/sub"), git, "config", "core.fsmonitor", "touch pwned")
		}, []string{"removed 'lib/sub/.git', made by the command (config sets core.fsmonitor), and put back 'lib/sub/.git' as it was"},
			nil, []string{"lib/sub/.git"}},
		{"a submodule's .git file pointed elsewhere", person, func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"lib/sub/.git": "gitdir: /tmp/elsewhere\n"})
		}, []string{"put back 'lib/sub/.git' as it was (a .git file or link"}, nil, []string{"lib/sub/.git"}},
		{"a new .git file and link", person, func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"p/.git": "gitdir: ../nested/.git\n"})
			if err := os.Symlink("../nested/.git", filepath.Join(dir, "lib/.git")); err != nil {
				t.Fatal(err)
			}
		}, []string{"removed 'lib/.git' (a .git file or link", "removed 'p/.git' (a .git file or link"}, []string{"p/.git", "lib/.git"}, nil},
		{"a commondir in a new repository", person, func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q", "c")
			appendFile(t, filepath.Join(dir, "c/.git/commondir"), "../../nested/.git\n")
		}, []string{"removed 'c/.git', made by the command (commondir makes git read settings from elsewhere)"}, nil, nil},
		{"the hooks folder made a link", person, func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "nested/.git/hooks")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../../evil", filepath.Join(dir, "nested/.git/hooks")); err != nil {
				t.Fatal(err)
			}
		}, []string{"put back 'nested/.git/hooks' as it was (hooks is not a folder)", "put back 'nested/.git/hooks/pre-merge' as it was"},
			nil, []string{"nested/.git/hooks/pre-merge"}},
		{"the person's repositories moved, as they are", person, func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "nested"), filepath.Join(dir, "moved")); err != nil {
				t.Fatal(err)
			}
		}, nil, nil, []string{".git/config", ".git/hooks/pre-push"}},
		{"a settings folder a .git file names, made a link", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"w/.git": "gitdir: ../store/w\n", "store/w/HEAD": "ref: refs/heads/main\n"})
		}, func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "store/w")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/tmp", filepath.Join(dir, "store/w")); err != nil {
				t.Fatal(err)
			}
		}, []string{"removed 'store/w' (it took the place of a git folder)"}, []string{"store/w"}, []string{"w/.git"}},
		{"a settings folder a .git file names, made again", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"w/.git": "gitdir: ../store/w\n", "store/w/HEAD": "ref: refs/heads/main\n"})
		}, func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "store"), filepath.Join(dir, "aside")); err != nil {
				t.Fatal(err)
			}
			writeTree(t, dir, map[string]string{"store/w/HEAD": "ref: refs/heads/main\n", "store/w/config": "[alias]\n\tst = !touch pwned\n"})
		}, []string{"removed 'store/w/config' (config sets alias.st)"}, []string{"store/w/config"}, []string{"w/.git"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.person(t, dir)
			kept := map[string]string{}
			for _, p := range tc.same {
				kept[p] = readFile(t, filepath.Join(dir, p))
			}
			ws := openWS(t, dir)
			before, err := ws.Git()
			if err != nil {
				t.Fatal(err)
			}
			tc.command(t, dir)
			done, err := ws.PutBackGit(before)
			if err != nil {
				t.Fatal(err)
			}
			if len(done) != len(tc.done) {
				t.Fatalf("PutBackGit did %q, want %d things: %q", done, len(tc.done), tc.done)
			}
			for i, want := range tc.done {
				if !strings.HasPrefix(done[i], want) {
					t.Errorf("PutBackGit said %q, want %q", done[i], want)
				}
			}
			for _, p := range tc.gone {
				if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
					t.Errorf("%s is still there", p)
				}
			}
			for p, was := range kept {
				if now, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(now) != was {
					t.Errorf("%s = %q, %v; want it as it was: %q", p, now, err, was)
				}
			}
			// A second look finds nothing left to put back.
			if again, err := ws.PutBackGit(before); err != nil || len(again) > 0 {
				t.Errorf("a second PutBackGit did %q, %v", again, err)
			}
		})
	}
}

// Settings are judged by what git does with them: a setting that makes
// git run a program, or a line only git reads for certain, is a risk;
// what 'git init', 'git clone' and the person's identity write is not.
func TestRepositorySettingsThatRunPrograms(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed to make real repositories; .ci/run installs it")
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		risk  string // part of the reason, "" for none
	}{
		{"git init", func(t *testing.T, dir string) { run(t, dir, git, "init", "-q") }, ""},
		{"a name, a branch, a remote", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q", "-b", "main")
			run(t, dir, git, "config", "user.name", "A Person")
			run(t, dir, git, "config", "branch.main.remote", "origin")
			run(t, dir, git, "remote", "add", "origin", "https://example.com/x.git")
		}, ""},
		{"fsmonitor", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			run(t, dir, git, "config", "core.fsmonitor", "touch pwned")
		}, "core.fsmonitor"},
		{"an alias", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			run(t, dir, git, "config", "alias.st", "!touch pwned")
		}, "alias.st"},
		{"a pager for one command", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			run(t, dir, git, "config", "pager.log", "touch pwned")
		}, "pager.log"},
		{"hooksPath in upper case", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[CORE]\n\tHooksPath = hooks\n")
		}, "core.hookspath"},
		{"a setting on the section's line", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[core] fsmonitor = touch pwned\n")
		}, `"[core] fsmonitor`},
		{"an old-style subsection", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[filter.x]\n\tclean = touch pwned\n")
		}, `"[filter.x]"`},
		{"a continued line", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[user]\n\tname = a \\\n\tfsmonitor\n")
		}, "continues a line"},
		{"an include", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[include]\n\tpath = ../evil\n")
		}, "include.path"},
		{"an includeIf", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[includeIf \"gitdir:/\"]\n\tpath = /tmp/evil\n")
		}, "includeif.path"},
		{"a filter for a subsection", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[filter \"x\"]\n\tclean = touch pwned\n")
		}, "filter.clean"},
		{"a textconv", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[diff \"x\"]\n\ttextconv = touch pwned\n")
		}, "diff.textconv"},
		{"an sshCommand", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, ".git/config"), "[core]\n\tsshCommand = touch pwned\n")
		}, "core.sshcommand"},
		{"config.worktree", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			appendFile(t, filepath.Join(dir, ".git/config.worktree"), "[core]\n\teditor = touch pwned\n")
		}, "config.worktree sets core.editor"},
		{"a hook named like a sample but a link", func(t *testing.T, dir string) {
			run(t, dir, git, "init", "-q")
			if err := os.Symlink("/bin/true", filepath.Join(dir, ".git/hooks/x.sample")); err != nil {
				t.Fatal(err)
			}
		}, `hook "x.sample"`},
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
			ws := openWS(t, dir)
			before, err := ws.Git()
			if err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			done, err := ws.PutBackGit(before)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Lstat(filepath.Join(dir, ".git"))
			switch {
			case tc.risk == "" && (len(done) > 0 || statErr != nil):
				t.Errorf("PutBackGit did %q to a plain repository (.git: %v)", done, statErr)
			case tc.risk != "" && (len(done) != 1 || !strings.Contains(done[0], tc.risk) || statErr == nil):
				t.Errorf("PutBackGit did %q, want .git removed for %q (.git: %v)", done, tc.risk, statErr)
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

// GitState.Paths names what of the repositories a sandboxed command may
// only read: every .git, the folder a "gitdir:" file leads to and the
// common folder a commondir names, inside the workspace (the sandbox
// shows nothing outside it writable), without blocking on a FIFO.
func TestGitStatePaths(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, ws, other string)
		want  []string
	}{
		{"no repository", nil, nil, nil},
		{"a .git folder", map[string]string{".git/HEAD": "ref: x\n"}, nil, []string{".git"}},
		{"a pointer to a folder in the workspace", map[string]string{".git": "gitdir: .repo\n", ".repo/HEAD": "ref: x\n"}, nil, []string{".git", ".repo"}},
		{"a worktree and its main repository elsewhere", nil, func(t *testing.T, ws, other string) {
			writeTree(t, ws, map[string]string{".git": "gitdir: " + filepath.Join(other, ".git", "worktrees", "wt") + "\n"})
			writeTree(t, other, map[string]string{".git/worktrees/wt/commondir": "../..\n"})
		}, []string{".git"}},
		{"a worktree and its main repository inside", map[string]string{".git": "gitdir: main/.git/worktrees/wt\n", "main/.git/worktrees/wt/commondir": "../..\n"}, nil,
			[]string{".git", "main/.git", "main/.git/worktrees/wt"}},
		{"a .git file that is not a pointer", map[string]string{".git": "hello\n"}, nil, []string{".git"}},
		{"a commondir that is a FIFO", map[string]string{".git": "gitdir: .repo\n", ".repo/HEAD": "ref: x\n"}, func(t *testing.T, ws, other string) {
			sandboxtest.Mkfifo(t, filepath.Join(ws, ".repo", "commondir"))
		}, []string{".git", ".repo"}},
		{"a .git that is a FIFO", nil, func(t *testing.T, ws, other string) { sandboxtest.Mkfifo(t, filepath.Join(ws, ".git")) }, []string{".git"}},
		{"a symlink to a repository", nil, func(t *testing.T, ws, other string) {
			writeTree(t, other, map[string]string{"repo/HEAD": "ref: x\n"})
			if err := os.Symlink(filepath.Join(other, "repo"), filepath.Join(ws, ".git")); err != nil {
				t.Fatal(err)
			}
		}, []string{".git"}},
		{"a submodule, its pointer relative to its own folder", map[string]string{".git/modules/sub/HEAD": "ref: x\n", "lib/sub/.git": "gitdir: ../../.git/modules/sub\n"}, nil,
			[]string{".git", ".git/modules/sub", "lib/sub/.git"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, other := t.TempDir(), t.TempDir()
			writeTree(t, ws, tt.files)
			if tt.setup != nil {
				tt.setup(t, ws, other)
			}
			// A hang guard, not a speed check: a FIFO must not block.
			done := make(chan []string, 1)
			go func() {
				g, err := openWS(t, ws).Git()
				if err != nil {
					t.Error(err)
				}
				done <- g.Paths(ws)
			}()
			var want []string
			for _, p := range tt.want {
				want = append(want, filepath.Join(ws, p))
			}
			select {
			case got := <-done:
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Paths = %q, want %q", got, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Git blocks")
			}
		})
	}
}
