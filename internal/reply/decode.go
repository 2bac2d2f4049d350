package reply

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrBinary is wrapped by every error Decode returns.
var ErrBinary = errors.New("reply is not text")

// DecodeError says where and why a reply could not be read as text.
type DecodeError struct {
	Offset int    // in the raw input
	Reason string // e.g. "invalid UTF-8", "NUL byte"
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("reply is not text: %s at byte %d", e.Reason, e.Offset)
}

func (e *DecodeError) Unwrap() error { return ErrBinary }

// maxStrayBytes is how many invalid UTF-8 sequences a reply may hold, as
// careless copies leave them (they become U+FFFD); more mean another
// encoding, which is refused.
const maxStrayBytes = 8

const bomUTF8 = "\xEF\xBB\xBF"

// Decode turns the raw bytes of a reply into text: it strips a UTF-8 byte
// order mark, decodes UTF-16 (with a byte order mark, or without as
// Windows tools write it), and turns CRLF and CR into LF. Input that is
// not text gives a *DecodeError. Plain UTF-8 with LF line ends is returned
// as it is, not copied.
func Decode(raw string) (string, error) {
	var text string
	var err error
	switch {
	case strings.HasPrefix(raw, bomUTF8):
		text, err = decodeUTF8(raw[len(bomUTF8):], len(bomUTF8))
	case strings.HasPrefix(raw, "\xFF\xFE"):
		text, err = decodeUTF16(raw[2:], 2, false)
	case strings.HasPrefix(raw, "\xFE\xFF"):
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
	// CRLF first, so that only lone CRs are left.
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	}
	return text, nil
}

func decodeUTF8(raw string, base int) (string, error) {
	if i := strings.IndexByte(raw, 0); i >= 0 {
		return "", &DecodeError{Offset: base + i, Reason: "NUL byte"}
	}
	if utf8.ValidString(raw) {
		return raw, nil
	}
	first, count := -1, 0
	for i, r := range raw {
		if r == utf8.RuneError && !strings.HasPrefix(raw[i:], "\uFFFD") {
			if first < 0 {
				first = i
			}
			count++
		}
	}
	if count > maxStrayBytes {
		return "", &DecodeError{Offset: base + first, Reason: "invalid UTF-8"}
	}
	return strings.ToValidUTF8(raw, "\uFFFD"), nil
}

// decodeUTF16 decodes UTF-16; an unpaired surrogate becomes U+FFFD, as
// utf16.Decode makes it.
func decodeUTF16(raw string, base int, bigEndian bool) (string, error) {
	if len(raw)%2 != 0 {
		return "", &DecodeError{Offset: base + len(raw) - 1, Reason: "odd byte count in UTF-16 text"}
	}
	unit := func(i int) rune {
		if bigEndian {
			return rune(raw[i])<<8 | rune(raw[i+1])
		}
		return rune(raw[i]) | rune(raw[i+1])<<8
	}
	var out strings.Builder
	for i := 0; i < len(raw); i += 2 {
		r := unit(i)
		if r == 0 {
			return "", &DecodeError{Offset: base + i, Reason: "NUL character in UTF-16 text"}
		}
		if utf16.IsSurrogate(r) {
			if i+3 < len(raw) {
				if pair := utf16.DecodeRune(r, unit(i+2)); pair != utf8.RuneError {
					out.WriteRune(pair)
					i += 2
					continue
				}
			}
			r = utf8.RuneError
		}
		out.WriteRune(r)
	}
	return strings.TrimPrefix(out.String(), "\uFEFF"), nil
}

// looksUTF16 recognises UTF-16 without a byte order mark: mostly-ASCII
// text has a zero in every other byte.
func looksUTF16(raw string) (bigEndian, ok bool) {
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
