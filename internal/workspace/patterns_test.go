package workspace_test

import (
	"testing"

	"github.com/courier-agent/courier/internal/workspace"
)

func TestPatterns(t *testing.T) {
	p, err := workspace.CompilePatterns([]string{"data/", "*.secret", "!keep.secret", "/top.txt", "node_modules/local/**", ""})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		dir   bool
		match bool
	}{
		{"data", true, true},
		{"data", false, false},
		{"sub/data", true, true},
		{"a.secret", false, true},
		{"deep/b.secret", false, true},
		{"keep.secret", false, false},
		{"top.txt", false, true},
		{"sub/top.txt", false, false},
		{"node_modules/local/x.js", false, true},
		{"node_modules/other/x.js", false, false},
	} {
		if got := p.Match(c.path, c.dir); got != c.match {
			t.Errorf("Match(%q, dir=%v) = %v, want %v", c.path, c.dir, got, c.match)
		}
	}
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{"node_modules", true},
		{"node_modules/local", true},
		{"node_modules/other", false},
		// A line without a slash never asks for a folder to be entered.
		{"vendor", false},
	} {
		if got := p.MayMatchInside(c.dir); got != c.want {
			t.Errorf("MayMatchInside(%q) = %v, want %v", c.dir, got, c.want)
		}
	}
	if _, err := workspace.CompilePatterns([]string{"bad["}); err == nil {
		t.Error("an unterminated bracket was accepted")
	}
	var none *workspace.Patterns
	if none.Match("x", false) || none.MayMatchInside("x") {
		t.Error("a nil list matches")
	}
}
