package protocol

import (
	"testing"
	"unicode/utf8"
)

// junk reads UTF-8 bytes instead of decoding: it must agree with
// isInvisible and isWideSpace on every character, and refuse what is not
// UTF-8 or cut short.
func TestJunkAgreesWithDecoding(t *testing.T) {
	check := func(s string) {
		t.Helper()
		r, size := utf8.DecodeRuneInString(s)
		wantSize, wantSpace := 0, false
		switch {
		case r == utf8.RuneError && size <= 1:
		case isInvisible(r):
			wantSize = size
		case isWideSpace(r):
			wantSize, wantSpace = size, true
		}
		if n, space := junk(s); n != wantSize || space != wantSpace {
			t.Fatalf("junk(%q) = %d, %v; want %d, %v", s, n, space, wantSize, wantSpace)
		}
	}
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		check(s)
		check(s + "x")
		for i := 1; i < len(s); i++ {
			check(s[:i]) // cut short
		}
	}
	for b := 0x80; b <= 0xff; b++ {
		for c := 0; c <= 0xff; c++ {
			check(string([]byte{byte(b), byte(c), 0xA0}))
		}
	}
}

// isBlankLine tells a line with nothing a reader would see without
// cleaning it; it must agree with cleaning and trimming.
func TestIsBlankLineAgreesWithCleaning(t *testing.T) {
	pieces := []string{" ", "\t", "\r", "\v", "\f", "\u200b", "\u00a0", "\ufeff", "\u3000", "\u2003", "\u0085", "\u2028",
		"x", "\xff", "\xe2\x80", "\ufffd", "é", "-"}
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		want := true
		for i := 0; i < len(s); i++ {
			if !isBlank(s[i]) {
				want = !(s[i] < utf8.RuneSelf && s[i] != '\r' && s[i] != '\v' && s[i] != '\f') && trimLine(s) == ""
				break
			}
		}
		if got := isBlankLine(s); got != want {
			t.Fatalf("isBlankLine(%q) = %v, want %v", s, got, want)
		}
		if depth < 4 {
			for _, p := range pieces {
				walk(s+p, depth+1)
			}
		}
	}
	walk("", 0)
}
