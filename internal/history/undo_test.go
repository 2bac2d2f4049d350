package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sourceTree is a small project: nested folders, an executable script, a
// read-only file, an empty folder, a symlink inside.
var sourceTree = map[string]string{
	"README.md":            "# demo\n",
	"go.mod":               "module demo\n",
	"src/main.go":          "package main\n\nfunc main() {}\n",
	"src/util/strings.go":  "package util\n",
	"src/util/numbers.go":  "package util\n\nconst N = 1\n",
	"src/util/deep/x.txt":  strings.Repeat("compressible line\n", 500),
	"scripts/build.sh":     "#!/bin/sh\necho build\n",
	"docs/empty/":          "",
	"data/blob.bin":        "\x00\x01\x02binary\x00",
	"notes/a b.txt":        "name with a space\n",
	"notes/read-only.txt":  "locked\n",
	"notes/setuid-like.sh": "#!/bin/sh\n",
}

func setupSource(t *testing.T, f *fixture) {
	t.Helper()
	f.write(sourceTree)
	f.sh(`chmod 755 scripts/build.sh && chmod 444 notes/read-only.txt && chmod 4755 notes/setuid-like.sh &&
		ln -s ../README.md src/readme-link && ln -s missing-target dangling`)
}

// TestUndoRestoresExactly plays real commands against a real tree and
// checks that undo gives back exactly the tree before the turn: types,
// modes, sizes, contents and symlink targets.
func TestUndoRestoresExactly(t *testing.T) {
	cases := []struct {
		name, script string
		// want is a piece the summary for the LLM must hold.
		want string
	}{
		{"rm -rf of the source tree", `rm -rf src docs`, "src/ (5 files deleted)"},
		{"rm -rf of everything, dot files included", `rm -rf ./* ./.[!.]*`, "deleted"},
		{"a script rewrites every file", `find . -type f -exec sh -c 'chmod u+w "$1" && echo rewritten > "$1"' _ {} \;`, "(edited"},
		{"chmod -x", `chmod -x scripts/build.sh notes/setuid-like.sh`, "scripts/build.sh (mode 0755 → 0644)"},
		{"chmod of folders", `chmod 500 docs/empty && chmod 700 src`, "mode"},
		{"chmod of the workspace folder", `chmod 751 .`, "changed: . (mode 0"},
		{"a file replaced by a symlink", `rm go.mod && ln -s /etc/passwd go.mod`, "go.mod (file → symlink)"},
		{"a symlink replaced by a file", `rm src/readme-link && echo plain > src/readme-link`, "src/readme-link (symlink → file)"},
		{"a symlink retargeted", `ln -sfn elsewhere dangling`, "dangling (symlink now to elsewhere)"},
		{"a folder replaced by a file", `rm -rf src/util && echo f > src/util`, "src/util"},
		{"a file replaced by a folder", `rm README.md && mkdir -p README.md/inner && echo x > README.md/inner/f`, "README.md"},
		{"thousands of files created", `mkdir -p gen/a/b/c && awk 'BEGIN { for (i = 0; i < 3000; i++) { f = "gen/f" i ".txt"; print i > f; close(f) } }'`, "gen/ (new, 3000 files"},
		{"files moved around", `mkdir moved && mv src/* moved/ && mv notes/* src/`, "moved/"},
		{"a fifo appears", `mkfifo pipe`, "pipe (new fifo)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			setupSource(t, f)
			before := listing(t, f.dir)
			ch := f.command(1, tc.script)
			if len(ch.List) == 0 {
				t.Fatal("the command's changes were not seen")
			}
			if sum := ch.Summary(12); !strings.Contains(sum, tc.want) {
				t.Errorf("summary %q lacks %q", sum, tc.want)
			}
			if lost(ch) {
				t.Errorf("the turn is reported partly undoable: %s", ch.Summary(50))
			}
			rep := f.undo(1)
			sameTree(t, "after undo", listing(t, f.dir), before)
			if len(rep.NotUndone) > 0 || len(rep.Kept) > 0 {
				t.Errorf("undo reported %s", rep.Notice())
			}
			// The folders among what came back are told apart, for the
			// lists shown folder by folder.
			folders := map[string]bool{}
			for _, p := range rep.Folders {
				folders[p] = true
			}
			for _, p := range rep.Restored {
				if info, err := os.Lstat(filepath.Join(f.dir, p)); err != nil || info.IsDir() != folders[p] {
					t.Errorf("restored %s: folder %v in the report, %v", p, folders[p], err)
				}
			}
			// A second undo of the same turn changes nothing.
			f.sh(`echo later > later.txt`)
			again := f.undo(1)
			if again.Notice() != rep.Notice() || fmt.Sprint(again.Folders) != fmt.Sprint(rep.Folders) {
				t.Errorf("a second undo reported %q (folders %v), the first %q (folders %v)", again.Notice(), again.Folders, rep.Notice(), rep.Folders)
			}
			if _, err := os.Stat(filepath.Join(f.dir, "later.txt")); err != nil {
				t.Errorf("a second undo touched the workspace: %v", err)
			}
		})
	}
}

// TestUndoOddNames restores files whose names hold spaces, newlines,
// quotes and bytes that are not UTF-8.
func TestUndoOddNames(t *testing.T) {
	f := newFixture(t, Options{})
	names := []string{"with space.txt", "new\nline.txt", "quote\"s.txt", "latin1-\xe9\xe8.txt", "\xff\xfe", "-dash", ".hidden", "tab\there", "comma, (paren)"}
	for i, n := range names {
		if err := os.WriteFile(filepath.Join(f.dir, n), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(f.dir, "dir "+n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.dir, "dir "+n, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := listing(t, f.dir)
	ch := f.command(1, `for f in ./*; do rm -rf "$f"; done; echo new > "$(printf 'fresh\nname')"`)
	sum := ch.Summary(40)
	if !strings.Contains(sum, `"fresh\nname" (new`) || !strings.Contains(sum, `"\xff\xfe" (deleted)`) {
		t.Errorf("odd names are not quoted in the summary: %s", sum)
	}
	if strings.Contains(sum, "\n") {
		t.Errorf("the summary holds a raw newline: %q", sum)
	}
	f.undo(1)
	sameTree(t, "after undo", listing(t, f.dir), before)
}

// TestUndoGitCommitAmend runs real git: a commit amended by a command is
// undone, history and all, and git finds the repository intact.
func TestUndoGitCommitAmend(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{"main.go": "package main\n", ".gitignore": "*.log\n"})
	git := `git -c user.name=Dev -c user.email=dev@example.com `
	f.sh(`git init -q -b main && ` + git + `add -A && ` + git + `commit -q -m first && echo "func a() {}" >> main.go && ` + git + `commit -qam second`)
	head := f.sh(`git rev-parse HEAD`)
	before := listing(t, f.dir)
	ch := f.command(1, `echo "func b() {}" >> main.go && `+git+`commit -q -a --amend -m amended && `+git+`gc -q --prune=now`)
	if sum := ch.Summary(10); !strings.Contains(sum, ".git/") {
		t.Errorf("the summary does not mention .git: %s", sum)
	}
	if f.sh(`git rev-parse HEAD`) == head {
		t.Fatal("the amend did not change HEAD")
	}
	f.undo(1)
	sameTree(t, "after undo", listing(t, f.dir), before)
	if got := f.sh(`git rev-parse HEAD`); got != head {
		t.Errorf("HEAD is %s after undo, want %s", got, head)
	}
	f.sh(`git fsck --strict --no-progress && git log --oneline | grep -q second && git status --porcelain | grep -qv . || true`)
	if out := f.sh(`git status --porcelain`); out != "" {
		t.Errorf("git status after undo: %q", out)
	}
}

// TestUndoKeepsLaterWork checks that undo never destroys silently what
// was changed after the turn: that content is set aside and reported.
func TestUndoKeepsLaterWork(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{"a.txt": "original a\n", "b.txt": "original b\n"})
	before := listing(t, f.dir)
	f.command(1, `echo "turn a" > a.txt && echo "turn c" > c.txt && rm b.txt`)
	// The person keeps working after the turn.
	f.sh(`echo "my later a" > a.txt && echo "my later c" > c.txt && echo "my new b" > b.txt && ln -sfn somewhere link`)
	rep := f.undo(1)
	got := listing(t, f.dir)
	// link was not the turn's: it stays; everything else is as before.
	sameTree(t, "after undo", strings.Join(withoutLine(strings.Split(got, "\n"), `"link"`), "\n"), before)
	if len(rep.Kept) != 3 {
		t.Fatalf("kept %+v, want a.txt, b.txt and c.txt", rep.Kept)
	}
	for p, savedAs := range rep.Kept {
		data, err := os.ReadFile(savedAs)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := map[string]string{"a.txt": "my later a\n", "b.txt": "my new b\n", "c.txt": "my later c\n"}[p]
		if string(data) != want {
			t.Errorf("%s set aside as %q, want %q", p, data, want)
		}
	}
}

func withoutLine(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// TestUndoLargeFiles restores files larger than what is read whole into
// memory, one that compresses and one that does not.
func TestUndoLargeFiles(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(map[string]string{"text.txt": strings.Repeat("a line of text that compresses well\n", 100000)})
	f.sh(`head -c 3000000 /dev/urandom > random.bin`)
	before := listing(t, f.dir)
	f.command(1, `rm text.txt && echo small > random.bin`)
	f.undo(1)
	sameTree(t, "after undo", listing(t, f.dir), before)
	var total int
	for _, c := range storedContents(t, f.h) {
		total += len(c)
	}
	if onDisk := duOf(t, f.h.obj.dir); onDisk > int64(total)*6/10 {
		t.Errorf("the store takes %d bytes for %d bytes of content: text was not compressed", onDisk, total)
	}
}
