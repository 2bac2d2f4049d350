package workspace_test

import (
	"reflect"
	"testing"

	"github.com/courier-agent/courier/internal/workspace"
)

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.go": "", "b.txt": "", "c1.md": "", "c2.md": "", "d.md": "",
		"src/x.go": "", "src/deep/y.go": "", "src/deep/z.txt": "",
		"node_modules/m.go": "", ".git/h.go": "", "empty/": "",
	})
	w := openWS(t, dir)
	tests := []struct {
		pattern string
		want    []string
	}{
		{pattern: "*.go", want: []string{"a.go"}},
		{pattern: "?.go", want: []string{"a.go"}},
		{pattern: "**/*.go", want: []string{"a.go", "src/deep/y.go", "src/x.go"}},
		{pattern: "src/**", want: []string{"src/deep/y.go", "src/deep/z.txt", "src/x.go"}},
		{pattern: "src/**/*.txt", want: []string{"src/deep/z.txt"}},
		{pattern: "c[12].md", want: []string{"c1.md", "c2.md"}},
		{pattern: "[!c]*.md", want: []string{"d.md"}},
		{pattern: "node_modules/*.go", want: []string{"node_modules/m.go"}},
		{pattern: "./src/*.go", want: []string{"src/x.go"}},
		{pattern: "**/deep/*", want: []string{"src/deep/y.go", "src/deep/z.txt"}},
		{pattern: "**/**/*.txt", want: []string{"b.txt", "src/deep/z.txt"}},
		{pattern: "src/**/**", want: []string{"src/deep/y.go", "src/deep/z.txt", "src/x.go"}},
		{pattern: "**/src/**/y.go", want: []string{"src/deep/y.go"}},
		{pattern: "*/*/*.go", want: []string{"src/deep/y.go"}},
		{pattern: "*.rs"},
		{pattern: "empty/*"},
	}
	for _, tc := range tests {
		got, err := w.Glob(tc.pattern)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Glob(%q) = %q, %v; want %q", tc.pattern, got, err, tc.want)
		}
	}
	for _, bad := range []string{"[", "src/[a-", "a/[]"} {
		if got, err := w.Glob(bad); err == nil {
			t.Errorf("Glob(%q) = %q, want a bad pattern error", bad, got)
		}
	}
	if _, err := w.Glob("../*.go"); !workspace.IsOutside(err) {
		t.Errorf("Glob outside err = %v", err)
	}
}

func TestIsGlob(t *testing.T) {
	for p, want := range map[string]bool{"a.go": false, "*.go": true, "a?.go": true, "[ab].go": true, "src/x": false} {
		if got := workspace.IsGlob(p); got != want {
			t.Errorf("IsGlob(%q) = %v", p, got)
		}
	}
}
