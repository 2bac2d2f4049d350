package runes

import (
	"testing"
	"unicode/utf8"
)

func TestWhole(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"a€", 4},
		{"a€"[:3], 1},       // € cut after two of its three bytes
		{"a€"[:2], 1},       // after one
		{"😀"[:3], 0},        // a four-byte character cut after three
		{"a\xff", 2},        // not UTF-8: not a cut character
		{"\x80\x80\x80", 3}, // continuation bytes alone: not a cut character either
		{"ab" + "é"[:1], 2},
	} {
		if got := Whole([]byte(c.in)); got != c.want {
			t.Errorf("Whole(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestWholeEveryCut cuts a text of one- to four-byte characters at every
// byte: what Whole keeps is valid UTF-8, and it keeps every whole
// character before the cut.
func TestWholeEveryCut(t *testing.T) {
	text := "a é € 😀 z"
	for cut := 0; cut <= len(text); cut++ {
		n := Whole([]byte(text[:cut]))
		if !utf8.ValidString(text[:n]) {
			t.Fatalf("cut at %d: kept %q, not valid", cut, text[:n])
		}
		if n < cut && utf8.FullRuneInString(text[n:cut]) {
			t.Fatalf("cut at %d: kept %d bytes, left out a whole character", cut, n)
		}
	}
}
