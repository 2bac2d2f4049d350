package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrBinary is wrapped by every error Decode returns: the saved reply is not
// text courier can read.
var ErrBinary = errors.New("reply is not text")

// DecodeError says where and why a saved reply could not be read as text.
type DecodeError struct {
	Offset int    // byte offset in the raw input
	Reason string // e.g. "invalid UTF-8", "NUL byte"
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("reply is not text: %s at byte %d", e.Reason, e.Offset)
}

// Unwrap lets errors.Is(err, ErrBinary) hold for every decode failure.
func (e *DecodeError) Unwrap() error { return ErrBinary }

// maxStrayBytes is how many invalid UTF-8 sequences a reply may hold before
// it counts as not UTF-8 at all: a few stray bytes come from careless copies
// and are replaced by U+FFFD, a whole file in another encoding is refused.
const maxStrayBytes = 8

var bomUTF8 = []byte{0xEF, 0xBB, 0xBF}

// Decode turns the raw bytes of a saved reply into text: it strips a UTF-8
// byte order mark, decodes UTF-16 LE/BE (with a byte order mark, or without
// one when the NUL pattern shows it, as Windows tools write), and turns CRLF
// and lone CR into LF. Input that is not text gives a *DecodeError, which
// wraps ErrBinary.
func Decode(raw []byte) (string, error) {
	var text string
	var err error
	switch {
	case bytes.HasPrefix(raw, bomUTF8):
		text, err = decodeUTF8(raw[len(bomUTF8):], len(bomUTF8))
	case bytes.HasPrefix(raw, []byte{0xFF, 0xFE}):
		text, err = decodeUTF16(raw[2:], 2, false)
	case bytes.HasPrefix(raw, []byte{0xFE, 0xFF}):
		text, err = decodeUTF16(raw[2:], 2, true)
	default:
		if bigEndian, ok := looksUTF16(raw); ok {
			text, err = decodeUTF16(raw, 0, bigEndian)
		} else {
			text, err = decodeUTF8(raw, 0)
		}
	}
	if err != nil {
		return "", err
	}
	return normalizeNewlines(text), nil
}

func decodeUTF8(raw []byte, base int) (string, error) {
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		return "", &DecodeError{Offset: base + i, Reason: "NUL byte"}
	}
	if utf8.Valid(raw) {
		return string(raw), nil
	}
	first, count := -1, 0
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			if first < 0 {
				first = i
			}
			count++
		}
		i += size
	}
	if count > maxStrayBytes {
		return "", &DecodeError{Offset: base + first, Reason: "invalid UTF-8"}
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD"), nil
}

func decodeUTF16(raw []byte, base int, bigEndian bool) (string, error) {
	if len(raw)%2 != 0 {
		return "", &DecodeError{Offset: base + len(raw) - 1, Reason: "odd byte count in UTF-16 text"}
	}
	units := make([]uint16, len(raw)/2)
	for i := range units {
		lo, hi := raw[2*i], raw[2*i+1]
		if bigEndian {
			lo, hi = hi, lo
		}
		u := uint16(lo) | uint16(hi)<<8
		if u == 0 {
			return "", &DecodeError{Offset: base + 2*i, Reason: "NUL character in UTF-16 text"}
		}
		units[i] = u
	}
	text := string(utf16.Decode(units))
	return strings.TrimPrefix(text, "\uFEFF"), nil
}

// looksUTF16 recognises UTF-16 without a byte order mark by its NUL
// pattern: mostly-ASCII text has a zero in every other byte.
func looksUTF16(raw []byte) (bigEndian, ok bool) {
	n := min(len(raw), 4096) &^ 1
	if n < 4 {
		return false, false
	}
	even, odd := 0, 0
	for i := 0; i < n; i += 2 {
		if raw[i] == 0 {
			even++
		}
		if raw[i+1] == 0 {
			odd++
		}
	}
	pairs := n / 2
	switch {
	case odd*2 > pairs && even*10 <= odd:
		return false, true
	case even*2 > pairs && odd*10 <= even:
		return true, true
	}
	return false, false
}

func normalizeNewlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}
