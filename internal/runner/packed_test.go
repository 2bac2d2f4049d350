package runner

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRuneCounter checks runeCounter against utf8.RuneCountInString on
// texts of ASCII, characters of every length and bad bytes, cut in pieces
// anywhere.
func TestRuneCounter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "code line\n", "é", "€", "😀", "\xe2\x82", "\xf0\x9f", "\x80", "\xff", "\xed\xa0\x80", strings.Repeat("x", 40)}
	for range 500 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		var c runeCounter
		for rest := s; rest != ""; {
			n := min(len(rest), rng.IntN(9))
			c.Write([]byte(rest[:n]))
			rest = rest[n:]
		}
		if got, want := c.n+utf8.RuneCount(c.held), utf8.RuneCountInString(s); got != want || c.bytes != int64(len(s)) {
			t.Fatalf("runeCounter of %q = %d characters, %d bytes; want %d, %d", s, got, c.bytes, want, len(s))
		}
	}
}
