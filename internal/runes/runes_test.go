package runes

import (
	"bytes"
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

// countPieces are characters of every length and lead byte kind Count
// tells apart, and bytes that are not UTF-8 or cut characters.
var countPieces = []string{
	"a", " ", "\n", "é", "ß", "\u0080", "\u07ff", "—", "✓", "€", "\u0800", "\u0900", "\ud7ff", "\ue000", "\uffff", "\ufffe",
	"😀", "\U0010ffff", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf5", "\xff", "\x80", "\xbf",
	"é"[:1], "€"[:2], "😀"[:3], "abcdefgh", "ünïcödé",
}

// TestCountMixedText checks Count against utf8.RuneCount on text built
// from countPieces at every alignment, so that characters and bad bytes
// fall at every place in and across the words Count reads.
func TestCountMixedText(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 20000; i++ {
		var p []byte
		for range rng.IntN(40) {
			p = append(p, countPieces[rng.IntN(len(countPieces))]...)
		}
		if got, want := Count(p), utf8.RuneCount(p); got != want {
			t.Fatalf("Count(%q) = %d, want %d", p, got, want)
		}
	}
}

func FuzzCount(f *testing.F) {
	for _, p := range countPieces {
		f.Add([]byte("abcdefg" + p + "xyz" + p))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if got, want := Count(p), utf8.RuneCount(p); got != want {
			t.Fatalf("Count(%q) = %d, want %d", p, got, want)
		}
	})
}

func BenchmarkCount(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"ascii", "ok   github.com/courier-agent/courier/internal/engine  2.214s\n"},
		{"utf8", "compiling package ünïcödé — ✓ done\n"},
		{"cjk", "编译完成，没有错误。测试全部通过。\n"},
	} {
		p := bytes.Repeat([]byte(c.line), (1<<20)/len(c.line))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				Count(p)
			}
		})
	}
}
