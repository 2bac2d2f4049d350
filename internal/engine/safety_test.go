package engine_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
)

// snapshot records every file and link under dir, skipping the folders
// named in skip, so a test can tell that nothing there was touched.
func snapshot(t *testing.T, dir string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		for _, s := range skip {
			if rel == s {
				return filepath.SkipDir
			}
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "link to " + target
			return err
		case d.IsDir():
			out[rel] = "folder"
		default:
			data, err := os.ReadFile(p)
			out[rel] = string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPathsOutsideRejected sends every way out of the workspace an LLM might
// write: each is rejected with the protocol's message and nothing outside
// (or inside) the workspace changes.
func TestPathsOutsideRejected(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	outside := filepath.Join(h.root, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", h.path("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/secret.txt", h.path("passwd")); err != nil {
		t.Fatal(err)
	}
	h.write("sub/inside.txt", "inside\n")
	abs := filepath.Join(outside, "abs.txt")
	inDir := func(dir string) command.Command {
		c := run("echo escaped > escaped.txt")
		c.Dir = dir
		return c
	}
	cases := []struct {
		cmd  command.Command
		path string // as the summary names it
	}{
		{create("../escape.txt", "x\n"), "../escape.txt"},
		{create(`..\escape.txt`, "x\n"), `..\escape.txt`},
		{create(abs, "x\n"), abs},
		{create("C:/Windows/escape.txt", "x\n"), "C:/Windows/escape.txt"},
		{create("link/through-link.txt", "x\n"), "link/through-link.txt"},
		{create("passwd", "overwritten\n"), "passwd"},
		{replace("passwd", "top secret", "overwritten"), "passwd"},
		{lines("passwd", 1, 1, "overwritten\n"), "passwd"},
		{lines("../outside/secret.txt", 1, 1, "overwritten\n"), "../outside/secret.txt"},
		{del("sub/../../outside/secret.txt"), "sub/../../outside/secret.txt"},
		{del("link/secret.txt"), "link/secret.txt"},
		{read("link/secret.txt"), "link/secret.txt"},
		{read("../outside/secret.txt"), "../outside/secret.txt"},
		{read(filepath.Join(outside, "secret.txt")), filepath.Join(outside, "secret.txt")},
		{read("../outside/*.txt"), "../outside/*.txt"},
		{inDir("../outside"), "../outside"},
		{inDir("link"), "link"},
	}
	before := snapshot(t, h.root, "sessions")
	cmds := make([]command.Command, len(cases))
	for i, c := range cases {
		cmds[i] = c.cmd
	}
	out := h.apply(cmds...)
	for i, c := range cases {
		r := out.Results[i]
		want := "REJECTED: Path '" + c.path + "' is outside workspace"
		if r.Status != command.Rejected || r.Summary != want {
			t.Errorf("%s %q: %s %q, want rejected %q", c.cmd.Type, c.path, r.Status, r.Summary, want)
		}
	}
	after := snapshot(t, h.root, "sessions")
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed from %q to %q", p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
	if len(out.Results) != len(cases) {
		t.Fatalf("%d results for %d commands", len(out.Results), len(cases))
	}
}

// TestPathsInsideAccepted checks the other side: paths that look unusual
// but stay inside are carried out.
func TestPathsInsideAccepted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.write("real/file.txt", "one\n")
	if err := os.Symlink("real", h.path("alias")); err != nil {
		t.Fatal(err)
	}
	out := h.apply(
		create("./dot.txt", "dot\n"),
		create("sub/../back.txt", "back\n"),
		replace("alias/file.txt", "one", "uno"),
	)
	for i, r := range out.Results {
		if r.Status != command.OK {
			t.Errorf("command %d: %s %q", i, r.Status, r.Summary)
		}
	}
	if h.read("dot.txt") != "dot\n" || h.read("back.txt") != "back\n" || h.read("real/file.txt") != "uno\n" {
		t.Errorf("files: dot %q, back %q, real/file.txt %q", h.read("dot.txt"), h.read("back.txt"), h.read("real/file.txt"))
	}
}
