package config

import (
	"strings"
	"testing"
)

func TestSizes(t *testing.T) {
	tests := []struct {
		text  string
		bytes int64 // 0: rejected
		shown string
	}{
		{"20MB", 20 << 20, `"20MB"`},
		{"512KB", 512 << 10, `"512KB"`},
		{"1GB", 1 << 30, `"1GB"`},
		{"2048MB", 2 << 30, `"2GB"`},
		{"1536KB", 1536 << 10, `"1536KB"`},
		{"1 mib", 1 << 20, `"1MB"`},
		{"3k", 3 << 10, `"3KB"`},
		{"1000", 1000, "1000"},
		{"1000B", 1000, "1000"},
		{"8589934591GB", 8589934591 << 30, `"8589934591GB"`},
		{"8589934592GB", 0, ""}, // beyond int64
		{"1.5MB", 0, ""},
		{"MB", 0, ""},
		{"-1MB", 0, ""},
		{"0", 0, ""},
		{"20 XB", 0, ""},
	}
	s, _ := find("max_reply", false)
	for _, tt := range tests {
		c := Defaults()
		err := c.Set("max_reply", tt.text, "test")
		n, shown := c.MaxReply, tomlText(s.show(c))
		switch {
		case tt.bytes == 0 && err == nil:
			t.Errorf("size %q = %d, want an error", tt.text, n)
		case tt.bytes != 0 && err != nil:
			t.Errorf("size %q: %v", tt.text, err)
		case tt.bytes != 0 && (n != tt.bytes || shown != tt.shown):
			t.Errorf("size %q = %d shown %s, want %d shown %s", tt.text, n, shown, tt.bytes, tt.shown)
		}
	}
}

func TestDurationsShowShort(t *testing.T) {
	tests := []struct {
		text, shown string
	}{
		{"30s", `"30s"`}, {"1m0s", `"1m"`}, {"90m", `"1h30m"`}, {"2h", `"2h"`},
		{"1h0m1s", `"1h0m1s"`}, {"250ms", `"250ms"`}, {"1m30s", `"1m30s"`},
	}
	s, _ := find("settle", false)
	for _, tt := range tests {
		c := Defaults()
		if err := c.Set("settle", tt.text, "test"); err != nil {
			t.Fatal(err)
		}
		if shown := tomlText(s.show(c)); shown != tt.shown {
			t.Errorf("duration %q shown %s, want %s", tt.text, shown, tt.shown)
		}
	}
}

func TestQuoteIsTOML(t *testing.T) {
	tests := []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`C:\path`, `"C:\\path"`},
		{"a\tb\nc", `"a\tb\nc"`},
		{"esc\x1b[0m", `"esc\u001B[0m"`},
		{"bad\xffbyte", "\"bad\uFFFDbyte\""},
		{"é", `"é"`},
	}
	for _, tt := range tests {
		if got := quote(tt.in); got != tt.want {
			t.Errorf("quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestDescribeLongArray(t *testing.T) {
	long := []any{strings.Repeat("x", 70)}
	if got := describe(long); got != "an array" {
		t.Errorf("describe(long array) = %s, want an array", got)
	}
	if got := describe([]any{int64(1), int64(2), int64(3), int64(4)}); got != "[1, 2, 3, ...]" {
		t.Errorf("describe([1 2 3 4]) = %s", got)
	}
}
