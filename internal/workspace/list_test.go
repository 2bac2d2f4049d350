package workspace_test

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
	"github.com/courier-agent/courier/internal/workspace"
)

func TestListWithGitIgnore(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".gitignore":               "*.log\nbuild/\n!keep.log\n/secret.txt\n",
		"main.go":                  "package main\n",
		"debug.log":                "noise",
		"keep.log":                 "kept",
		"secret.txt":               "s",
		"build/out.bin":            "\x00\x01",
		"sub/.gitignore":           "generated/\n",
		"sub/generated/x.go":       "x",
		"sub/secret.txt":           "not anchored here",
		"sub/trace.log":            "noise",
		"node_modules/dep/i.js":    "dep",
		".git/config":              "[core]",
		".courier-tmp-main.go-123": "crash leftover",
		"img.png":                  "\x89PNG\x00\x00",
	})
	w := openWS(t, dir)
	got, err := w.List(workspace.ListOptions{GitIgnore: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []workspace.Entry{
		{Path: ".gitignore", Size: 35, Regular: true},
		{Path: "img.png", Size: 6, Binary: true, Regular: true},
		{Path: "keep.log", Size: 4, Regular: true},
		{Path: "main.go", Size: 13, Regular: true},
		{Path: "sub/.gitignore", Size: 11, Regular: true},
		{Path: "sub/secret.txt", Size: 17, Regular: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("listing:\n got %+v\nwant %+v", got, want)
	}

	// Without the option nothing is hidden by .gitignore, but tool folders
	// and temporary files still are.
	all, err := w.List(workspace.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paths := entryPaths(all)
	// The ignore files read as the walk goes decide as the ones read by
	// path do.
	ignored := w.GitIgnore()
	for _, e := range all {
		if listed := strings.Contains("\n"+entryPaths(got), "\n"+e.Path+"\n"); ignored(e.Path, false) == listed {
			t.Errorf("%s: listed %v, but GitIgnore says ignored %v", e.Path, listed, !listed)
		}
	}
	for _, p := range []string{"debug.log", "build/out.bin", "sub/generated/x.go"} {
		if !strings.Contains(paths, p+"\n") {
			t.Errorf("%s missing from the plain listing:\n%s", p, paths)
		}
	}
	for _, p := range []string{"node_modules", ".git/", ".courier-tmp"} {
		if strings.Contains(paths, p) {
			t.Errorf("%s listed:\n%s", p, paths)
		}
	}
}

func TestListSkipsToolFolders(t *testing.T) {
	tree := map[string]string{"a.txt": "a"}
	for _, d := range []string{".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv",
		".mypy_cache", ".pytest_cache", ".tox", ".gradle", ".idea", ".next", ".cache", "sub/node_modules"} {
		tree[d+"/x"] = "x"
	}
	dir := t.TempDir()
	writeTree(t, dir, tree)
	got, err := openWS(t, dir).List(workspace.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []workspace.Entry{{Path: "a.txt", Size: 1, Regular: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
}

func TestListBinaryMarks(t *testing.T) {
	tests := []struct {
		content string
		binary  bool
	}{
		{content: "plain text\n"},
		{content: "utf-8 ünïcødé\n"},
		{content: ""},
		{content: "nul\x00inside", binary: true},
		{content: strings.Repeat("a", 8191) + "\x00", binary: true},
		{content: strings.Repeat("a", 8192) + "\x00"},
	}
	for i, tc := range tests {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"f": tc.content})
		got, err := openWS(t, dir).List(workspace.ListOptions{})
		if err != nil || len(got) != 1 {
			t.Fatalf("case %d: %+v, %v", i, got, err)
		}
		if got[0].Binary != tc.binary || got[0].Size != int64(len(tc.content)) {
			t.Errorf("case %d: %+v, want binary %v", i, got[0], tc.binary)
		}
	}
}

func TestListSummarisesHugeTrees(t *testing.T) {
	tests := []struct {
		name string
		// files makes the tree: path -> content.
		files func() map[string]string
		max   int
		want  []workspace.Entry
	}{
		{
			name: "folders at depth two fit",
			files: func() map[string]string {
				m := map[string]string{"README": "r"}
				for i := range 2000 {
					m[fmt.Sprintf("pkg%d/mod%d/f%04d.go", i%4, i%10, i)] = strings.Repeat("x", i%7)
				}
				return m
			},
			max:  100,
			want: depthTwoSummary(),
		},
		{
			name: "only top folders fit",
			files: func() map[string]string {
				m := map[string]string{}
				for i := range 2000 {
					m[fmt.Sprintf("d%d/s%03d/f%d", i%5, i%200, i)] = "ab"
				}
				return m
			},
			max: 100,
			want: []workspace.Entry{
				{Path: "d0/", IsDir: true, Files: 400},
				{Path: "d1/", IsDir: true, Files: 400},
				{Path: "d2/", IsDir: true, Files: 400},
				{Path: "d3/", IsDir: true, Files: 400},
				{Path: "d4/", IsDir: true, Files: 400},
			},
		},
		{
			name: "flat folder is cut with a rest line",
			files: func() map[string]string {
				m := map[string]string{"zz/a": "1", "zz/b": "22"}
				for i := range 2000 {
					m[fmt.Sprintf("f%04d", i)] = "abc"
				}
				return m
			},
			max:  100,
			want: flatSummary(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := tc.files()
			writeTree(t, dir, files)
			got, err := openWS(t, dir).List(workspace.ListOptions{MaxEntries: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > tc.max {
				t.Errorf("%d lines, limit %d", len(got), tc.max)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("summary:\n got %+v\nwant %+v", got, tc.want)
			}
			n := 0
			for _, e := range got {
				n += max(e.Files, 1)
				if !e.IsDir && e.Size != int64(len(files[e.Path])) {
					t.Errorf("%s: %d bytes, want %d", e.Path, e.Size, len(files[e.Path]))
				}
			}
			if n != len(files) {
				t.Errorf("summary covers %d files; tree has %d", n, len(files))
			}
		})
	}
}

// depthTwoSummary is the listing of the first summary case: README, then
// pkgP/modM/ for the ten modules each package gets (i%4 and i%10 pair up
// as P and M of equal parity), 100 files each.
func depthTwoSummary() []workspace.Entry {
	want := []workspace.Entry{{Path: "README", Size: 1, Regular: true}}
	for p := range 4 {
		for m := range 10 {
			if p%2 != m%2 {
				continue
			}
			e := workspace.Entry{Path: fmt.Sprintf("pkg%d/mod%d/", p, m), IsDir: true}
			for i := range 2000 {
				if i%4 == p && i%10 == m {
					e.Files++
				}
			}
			want = append(want, e)
		}
	}
	return want
}

// flatSummary is the listing of the flat case: the folder first, then as
// many files as fit, then one line for the rest.
func flatSummary() []workspace.Entry {
	var want []workspace.Entry
	for i := range 98 {
		want = append(want, workspace.Entry{Path: fmt.Sprintf("f%04d", i), Size: 3, Regular: true})
	}
	want = append(want, workspace.Entry{Path: "zz/", IsDir: true, Files: 2})
	return append(want, workspace.Entry{Path: workspace.RestPath, IsDir: true, Files: 1902})
}

func TestListEmptyWorkspace(t *testing.T) {
	got, err := openWS(t, t.TempDir()).List(workspace.ListOptions{MaxEntries: 10})
	if err != nil || len(got) != 0 {
		t.Errorf("got %+v, %v", got, err)
	}
}

func entryPaths(es []workspace.Entry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.Path + "\n")
	}
	return b.String()
}

// A chain of folders 5,000 deep, a file in each, is listed whole and
// summarised like any tree: walking it costs each folder the same, not
// its depth.
func TestListDeepChain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := makeChain(dir, 5000); err != nil {
		t.Fatal(err)
	}
	w := openWS(t, dir)
	all, err := w.List(workspace.ListOptions{GitIgnore: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5000 {
		t.Fatalf("%d files listed, want 5000", len(all))
	}
	deepest := strings.Repeat("d/", 5000) + "f"
	if all[0].Path != deepest || all[0].Size != 2 || all[4999].Path != "d/f" {
		t.Errorf("first %.40q... (%d bytes), last %q", all[0].Path, all[0].Size, all[4999].Path)
	}
	short, err := w.List(workspace.ListOptions{MaxEntries: 300, GitIgnore: true})
	if err != nil {
		t.Fatal(err)
	}
	last := short[0]
	if len(short) != 300 || !last.IsDir || last.Path != strings.Repeat("d/", 300) || last.Files != 4701 || short[1].Size != 2 {
		t.Errorf("%d lines, first %.40q (%d files), then a file of %d bytes", len(short), last.Path, last.Files, short[1].Size)
	}
}

// Named pipes and sockets are listed, never opened: the listing reads the
// start of the files it shows, and opening a pipe would wait forever.
func TestListSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"bin.dat": "\x00\x01", "text.txt": "hi\n"})
	sandboxtest.Mkfifo(t, filepath.Join(dir, "pipe"))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Symlink("bin.dat", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	done := make(chan []workspace.Entry)
	go func() {
		got, err := openWS(t, dir).List(workspace.ListOptions{})
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	select {
	case got := <-done:
		want := []workspace.Entry{
			{Path: "bin.dat", Size: 2, Binary: true, Regular: true},
			{Path: "link", Size: 7},
			{Path: "pipe"},
			{Path: "sock"},
			{Path: "text.txt", Size: 3, Regular: true},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("listing:\n got %+v\nwant %+v", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the listing is stuck on a named pipe or a socket")
	}
}

// The listing comes out sorted by path without sorting all of it: the walk
// visits each folder's names in the order their paths sort, where "a-b"
// comes before "a/x" but "a" before "a-b". Random trees of names that
// sort around "/" show it, folders and files of every depth mixed.
func TestListInPathOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"a", "b", "a-b", "a.b", "ab", "a0", "a b", "A", "é", "a~"}
	for round := range 20 {
		tree := map[string]string{}
		var files []string
		for range 40 {
			parts := make([]string, 1+rng.IntN(4))
			for j := range parts {
				parts[j] = names[rng.IntN(len(names))]
			}
			p := strings.Join(parts, "/")
			clash := tree[p] != ""
			for q := range tree {
				clash = clash || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/")
			}
			if !clash {
				tree[p] = "x"
				files = append(files, p)
			}
		}
		sort.Strings(files)
		dir := t.TempDir()
		writeTree(t, dir, tree)
		w := openWS(t, dir)
		listed, err := w.List(workspace.ListOptions{GitIgnore: true})
		if err != nil {
			t.Fatal(err)
		}
		all, err := w.Files(workspace.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]workspace.Entry{listed, all} {
			if paths := entryPaths(got); paths != strings.Join(files, "\n")+"\n" {
				t.Fatalf("round %d: listed\n%s\nwant\n%s", round, paths, strings.Join(files, "\n"))
			}
		}
	}
}

// The walk holds the first folders on its way down open to go back to:
// every one of them is closed when the listing is done, however the walk
// ended (a chain deeper than what is held, with side folders to come back
// for, then without).
func TestListClosesFolders(t *testing.T) {
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("cannot count open files: %v", err)
		}
		return len(ents)
	}
	for _, side := range []bool{true, false} {
		dir := t.TempDir()
		tree := map[string]string{}
		p := ""
		for i := range 100 {
			p += fmt.Sprintf("d%d/", i)
			tree[p+"f"] = "x"
			if side {
				tree[p+"side/f"] = "x"
			}
		}
		writeTree(t, dir, tree)
		w := openWS(t, dir)
		before := open()
		got, err := w.List(workspace.ListOptions{GitIgnore: true})
		if err != nil || len(got) != len(tree) {
			t.Fatalf("%d files listed, want %d: %v", len(got), len(tree), err)
		}
		if after := open(); after != before {
			t.Errorf("side folders %v: %d files open before the listing, %d after", side, before, after)
		}
	}
}
