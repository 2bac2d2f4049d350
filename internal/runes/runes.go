// Package runes finds where text cut at an arbitrary byte stops holding
// whole UTF-8 characters: output, lines and file heads are cut by size,
// and a character split by the cut must be held back or left out, never
// shown as a broken byte.
package runes

import "unicode/utf8"

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
