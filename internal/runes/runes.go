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
// one character a byte and is skipped 32 bytes at a time; from the first
// other byte on, valid UTF-8 (checked first, which is fast) has one
// character per byte that is not a continuation byte, counted eight bytes
// at a time.
func Count(p []byte) int {
	q := p[:len(p):len(p)]
	for len(q) >= 32 && (word(q)|word(q[8:])|word(q[16:])|word(q[24:]))&hiBits == 0 {
		q = q[32:]
	}
	for len(q) >= 8 && word(q)&hiBits == 0 {
		q = q[8:]
	}
	for len(q) > 0 && q[0] < utf8.RuneSelf {
		q = q[1:]
	}
	ascii := len(p) - len(q)
	if len(q) == 0 {
		return ascii
	}
	if !utf8.Valid(q) {
		return ascii + utf8.RuneCount(q)
	}
	cont := 0
	i := 0
	for ; i+8 <= len(q); i += 8 {
		w := word(q[i:])
		// A continuation byte is 10xxxxxx: bit 7 set, bit 6 clear.
		cont += bits.OnesCount64(w & hiBits &^ (w << 1))
	}
	for ; i < len(q); i++ {
		if !utf8.RuneStart(q[i]) {
			cont++
		}
	}
	return len(p) - cont
}

// CountString is Count for a string, which it reads in place.
func CountString(s string) int {
	return Count(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// word is the eight bytes at the start of p.
func word(p []byte) uint64 { return binary.LittleEndian.Uint64(p) }
