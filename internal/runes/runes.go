// Package runes finds where text cut at an arbitrary byte stops holding
// whole UTF-8 characters: output, lines and file heads are cut by size,
// and a character split by the cut must be held back or left out, never
// shown as a broken byte.
package runes

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// Whole returns how many bytes of b hold only whole characters: all of b,
// unless its last character is cut by the end of b, then up to that
// character. Bytes that are not UTF-8 at all count as whole: they are
// not a cut character, and the caller judges them.
func Whole(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// WholeString is Whole for a string, which it reads in place.
func WholeString(s string) int {
	return Whole(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// hiBits are the high bits of eight bytes: none is set in ASCII.
const hiBits = 0x8080808080808080

// Count counts the characters p decodes to, as utf8.RuneCount does (a
// byte of a bad sequence counts as one), quickly on the text courier
// counts most: command output and source code. A leading run of ASCII is
// one character a byte and is skipped 32 bytes at a time; after it, eight
// bytes at a time are checked to be ASCII or whole two- and three-byte
// characters whose lead byte is C2-DF (two bytes) or E1-EC, EE-EF (three
// bytes, valid whatever continuation bytes follow), which count one a
// byte that is not a continuation byte. Anything else (four-byte characters,
// the lead bytes that need their second byte checked, bad sequences) is
// decoded one character at a time until the next word.
func Count(p []byte) int {
	q := p[:len(p):len(p)]
	for len(q) >= 32 && (word(q)|word(q[8:])|word(q[16:])|word(q[24:]))&hiBits == 0 {
		q = q[32:]
	}
	n := len(p) - len(q)
	i := 0
	// carry marks the continuation bytes a character begun in the last
	// word expects at the start of the next.
	var carry uint64
	for {
		for i+8 <= len(q) {
			w := word(q[i:])
			if w&hiBits == 0 {
				if carry != 0 {
					break
				}
				n, i = n+8, i+8
				continue
			}
			// Bits 7 to 4 of each byte, each moved to bit 7.
			b7, b6, b5, b4 := w&hiBits, (w<<1)&hiBits, (w<<2)&hiBits, (w<<3)&hiBits
			cont := b7 &^ b6            // 10xxxxxx
			lead2 := b7 & b6 &^ b5      // 110xxxxx
			lead3 := b7 & b6 & b5 &^ b4 // 1110xxxx
			if b7&b6&b5&b4 != 0 ||      // 1111xxxx: four bytes, or not UTF-8
				hasByte(w&0xfefefefefefefefe, 0xc0) || // C0, C1: never valid
				hasByte(w, 0xe0) || hasByte(w, 0xed) || // their second byte is limited
				cont != lead2<<8|lead3<<8|lead3<<16|carry {
				break
			}
			n += 8 - bits.OnesCount64(cont)
			carry = (lead2|lead3)>>56 | lead3>>48
			i += 8
		}
		if carry != 0 {
			// A character begun in the last word did not go on as
			// expected: it is decoded again from its first byte, which
			// was counted.
			for i--; !utf8.RuneStart(q[i]); i-- {
			}
			n--
			carry = 0
		}
		if i == len(q) {
			return n
		}
		for end := min(i+8, len(q)); i < end; n++ {
			_, size := utf8.DecodeRune(q[i:])
			i += size
		}
	}
}

// hasByte reports whether one of the eight bytes of w is b.
func hasByte(w uint64, b byte) bool {
	x := w ^ (0x0101010101010101 * uint64(b))
	return (x-0x0101010101010101)&^x&hiBits != 0
}

// CountString is Count for a string, which it reads in place.
func CountString(s string) int {
	return Count(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// word is the eight bytes at the start of p.
func word(p []byte) uint64 { return binary.LittleEndian.Uint64(p) }
