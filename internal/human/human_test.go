package human

import (
	"strings"
	"testing"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 812: "812 bytes", 5325: "5.2 KB", 2202010: "2.1 MB", 3 << 30: "3.0 GB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestExactBytes(t *testing.T) {
	for n, want := range map[int64]string{1000: "1000 bytes", 512 << 10: "512 KB", 20 << 20: "20 MB", 1 << 30: "1 GB", 1<<20 + 1: "1048577 bytes"} {
		if got := ExactBytes(n); got != want {
			t.Errorf("ExactBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	cases := []struct {
		n            int
		noun, plural string
		want         string
	}{
		{1, "line", "", "1 line"},
		{0, "line", "", "0 lines"},
		{3, "command", "", "3 commands"},
		{2, "match", "", "2 matches"},
		{2, "process", "", "2 processes"},
		{2, "entry", "entries", "2 entries"},
		{1, "search/replace edit", "", "1 search/replace edit"},
	}
	for _, c := range cases {
		if got := Count(c.n, c.noun, c.plural); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	cases := []struct {
		s    string
		max  int
		want string
	}{
		{"  npm test  ", 0, "npm test"},
		{"make\nmake install", 0, "make …"},
		{"abcdefgh", 5, "abcde …"},
		{"héllo wörld", 5, "héllo …"},
		{"a long first line\nand more", 6, "a long …"},
	}
	for _, c := range cases {
		if got := FirstLine(c.s, c.max); got != c.want {
			t.Errorf("FirstLine(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}

func TestCutAndOneLine(t *testing.T) {
	cases := []struct {
		s        string
		max      int
		cut, one string
	}{
		{"short", 10, "short", "short"},
		{"exactly5", 8, "exactly5", "exactly5"},
		{"日本語のテキスト", 3, "日本語 …", "日本語 …"},
		{" rm  -rf\n build ", 0, " rm  -rf\n build ", "rm -rf build"},
		{"echo a\necho b", 8, "echo a\ne …", "echo a e …"},
		{"It is long", 3, "It …", "It …"},
	}
	for _, c := range cases {
		if got := Cut(c.s, c.max); got != c.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.s, c.max, got, c.cut)
		}
		if got := OneLine(c.s, c.max); got != c.one {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.s, c.max, got, c.one)
		}
	}
}

func TestLines(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "a\nb\n": 2, "\n": 1} {
		if got := Lines(s); got != want {
			t.Errorf("Lines(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestTokens(t *testing.T) {
	if got := Tokens(strings.Repeat("abcd", 100)); got != 100 {
		t.Errorf("Tokens of 400 characters = %d, want 100", got)
	}
	if got := Tokens("héllo"); got != 2 {
		t.Errorf("Tokens counts bytes, not characters: %d", got)
	}
}
