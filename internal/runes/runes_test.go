package runes

import (
	"math/rand/v2"
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
		if got := WholeString(c.in); got != c.want {
			t.Errorf("WholeString(%q) = %d, want %d", c.in, got, c.want)
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

// TestCount checks Count and CountString against utf8.RuneCount on
// random text: ASCII runs of any length, then high bytes of every kind.
func TestCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		p := make([]byte, rng.IntN(200))
		// A run of ASCII first, of any length, then mostly text with some
		// high bytes of every kind.
		ascii := rng.IntN(len(p) + 1)
		for j := range p {
			if j < ascii {
				p[j] = byte(rng.IntN(0x80))
			} else if rng.IntN(4) == 0 {
				p[j] = byte(0x80 + rng.IntN(0x80))
			} else {
				p[j] = byte('a' + rng.IntN(26))
			}
		}
		if got, want := Count(p), utf8.RuneCount(p); got != want {
			t.Fatalf("Count(%q) = %d, want %d", p, got, want)
		}
		if got, want := CountString(string(p)), utf8.RuneCount(p); got != want {
			t.Fatalf("CountString(%q) = %d, want %d", p, got, want)
		}
	}
}
