package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"npm test", "npm test"},
		{"tab\tand\nnewline stay", "tab\tand\nnewline stay"},
		{"héllo, 世界, emoji 🙂", "héllo, 世界, emoji 🙂"},
		{"rm -rf important_dir\r\x1b[1A\x1b[2Knpm test", `rm -rf important_dir\r\x1b[1A\x1b[2Knpm test`},
		{"\x1b]52;c;ZWNobyBwd25lZA==\x07", `\x1b]52;c;ZWNobyBwd25lZA==\x07`},
		{"\x1b]0;title\x1b\\", `\x1b]0;title\x1b\`},
		{"bell\x07 backspace\x08 nul\x00 del\x7f", `bell\x07 backspace\x08 nul\x00 del\x7f`},
		{"c1 csi \u009b31m next-line \u0085", `c1 csi \u009b31m next-line \u0085`},
		{"lone byte \x9b2J and \xff", `lone byte \x9b2J and \xff`},
		{"bidi \u202eexe.txt\u202c", `bidi \u202eexe.txt\u202c`},
		{"isolates \u2066a\u2067b\u2068c\u2069", `isolates \u2066a\u2067b\u2068c\u2069`},
		{"zero\u200bwidth\u200d joiner \ufeff bom \u2060", `zero\u200bwidth\u200d joiner \ufeff bom \u2060`},
		{"line\u2028sep\u2029", `line\u2028sep\u2029`},
		{"tag \U000e0041", `tag \U000e0041`},
		{"hangul filler \u3164 here", `hangul filler \u3164 here`},
	}
	for _, tc := range tests {
		if got := Safe(tc.in); got != tc.want {
			t.Errorf("Safe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A command is shown whole on one line: what follows a line break, or an
// escape that would move the cursor back over it, stays visible.
func TestCommand(t *testing.T) {
	tests := []struct{ cmd, env, want string }{
		{"git add -A", "", `'git add -A'`},
		{"git add -A", "GIT_CONFIG_COUNT=1 GIT_CONFIG_VALUE_0='sh x.sh'", `'git add -A' with GIT_CONFIG_COUNT=1 GIT_CONFIG_VALUE_0='sh x.sh'`},
		{"npm test\nrm -rf ~\n", "", `'npm test\nrm -rf ~'`},
		{"npm test\r\x1b[2Kls", "X=$'\x1b'\x1b[2K", `'npm test\r\x1b[2Kls' with X=$'\x1b'\x1b[2K`},
	}
	for _, tc := range tests {
		if got := Command(tc.cmd, tc.env); got != tc.want {
			t.Errorf("Command(%q, %q) = %q, want %q", tc.cmd, tc.env, got, tc.want)
		}
	}
}

// TestSafeLeavesNothingActive checks every code point and every byte: the
// result holds no control, no C1, no format character and is valid UTF-8.
func TestSafeLeavesNothingActive(t *testing.T) {
	var b strings.Builder
	for r := rune(0); r <= 0x10ffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		b.WriteRune(r)
	}
	for c := 0x80; c <= 0xff; c++ {
		b.WriteByte(byte(c))
		b.WriteByte(' ')
	}
	out := Safe(b.String())
	if !utf8.ValidString(out) {
		t.Fatal("Safe left invalid UTF-8")
	}
	for _, r := range out {
		if unsafe(r) {
			t.Fatalf("Safe left %U", r)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Fatal("Safe left an ESC")
	}
}

func TestSafeReturnsCleanTextUnchanged(t *testing.T) {
	s := strings.Repeat("ordinary text, ünïcode 😀\tand lines\n", 100)
	if got := Safe(s); got != s {
		t.Fatal("clean text changed")
	}
	if n := testing.AllocsPerRun(100, func() { Safe(s) }); n != 0 {
		t.Errorf("Safe allocated %v times for clean text", n)
	}
}
