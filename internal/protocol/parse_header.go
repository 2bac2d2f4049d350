package protocol

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
)

// header picks up the "Session: a1b2c3d4" and "Sequence: 3" lines the
// outbox asks the LLM to echo, written plainly or with Markdown decoration.
func (p *parser) header(line string) {
	if len(line) > maxHeaderLine || strings.IndexByte(line, ':') < 0 || (p.reply.Session != "" && p.reply.Sequence != 0) {
		return
	}
	if isASCII(line) {
		p.headerASCII(line)
		return
	}
	s := strings.Map(func(r rune) rune {
		if r == '*' || r == '_' || r == '`' {
			return -1
		}
		return r
	}, trimLine(line))
	s = strings.TrimLeft(s, "#>-+ \t")
	key, val, ok := strings.Cut(s, ":")
	if !ok {
		return
	}
	key = strings.TrimSpace(key)
	val = strings.TrimLeftFunc(val, unicode.IsSpace)
	if i := strings.IndexFunc(val, unicode.IsSpace); i >= 0 {
		val = val[:i]
	}
	if val == "" {
		return
	}
	switch {
	case asciiFold(key, "session"), asciiFold(key, "session id"), asciiFold(key, "sessionid"):
		if p.reply.Session == "" && isSessionID(val) {
			p.reply.Session = strings.ToLower(val)
		}
	case asciiFold(key, "sequence"), asciiFold(key, "seq"):
		if n, err := strconv.Atoi(val); err == nil && n > 0 && p.reply.Sequence == 0 {
			p.reply.Sequence = n
		}
	}
}

// maxHeaderLine is the longest line read as a header echo.
const maxHeaderLine = 200

// headerASCII is header for an ASCII line, in the same steps, without
// copies: trim it, drop the Markdown marks, trim the quote and list marks
// in front, split at ':', and take the first word of the value.
func (p *parser) headerASCII(line string) {
	// Every key starts with 's': the first character that is neither a
	// mark dropped or trimmed below nor a space must be one.
	for i := 0; i < len(line); i++ {
		if c := line[i]; !headerLead[c] {
			if c|0x20 != 's' {
				return
			}
			break
		}
	}
	var buf [maxHeaderLine]byte
	// The line is trimmed before the marks are dropped.
	lead, trail := 0, len(line)
	for lead < trail && isSpaceASCII(line[lead]) {
		lead++
	}
	for trail > lead && isSpaceASCII(line[trail-1]) {
		trail--
	}
	b := buf[:0]
	for i := lead; i < trail; i++ {
		if c := line[i]; c != '*' && c != '_' && c != '`' {
			b = append(b, c)
		}
	}
	for len(b) > 0 && strings.IndexByte("#>-+ \t", b[0]) >= 0 {
		b = b[1:]
	}
	colon := bytes.IndexByte(b, ':')
	if colon < 0 {
		return
	}
	key, val := trimSpaceBytes(b[:colon]), b[colon+1:]
	for len(val) > 0 && isSpaceASCII(val[0]) {
		val = val[1:]
	}
	for i, c := range val {
		if isSpaceASCII(c) {
			val = val[:i]
			break
		}
	}
	if len(val) == 0 {
		return
	}
	switch {
	case asciiFold(string(key), "session"), asciiFold(string(key), "session id"), asciiFold(string(key), "sessionid"):
		if p.reply.Session == "" && isSessionID(string(val)) {
			p.reply.Session = strings.ToLower(string(val))
		}
	case asciiFold(string(key), "sequence"), asciiFold(string(key), "seq"):
		if n, err := strconv.Atoi(string(val)); err == nil && n > 0 && p.reply.Sequence == 0 {
			p.reply.Sequence = n
		}
	}
}

// headerLead are the characters headerASCII drops or trims in front of a
// key: Markdown marks and ASCII spaces.
var headerLead = func() (t [256]bool) {
	for _, c := range []byte("*_`#>-+ \t\n\r\v\f") {
		t[c] = true
	}
	return t
}()

func trimSpaceBytes(b []byte) []byte {
	for len(b) > 0 && isSpaceASCII(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpaceASCII(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// asciiFold reports whether s is want (lower-case ASCII) in any ASCII case.
func asciiFold(s, want string) bool {
	if len(s) != len(want) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

func isSessionID(s string) bool {
	if len(s) != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
