package protocol

import (
	"strconv"
	"strings"
)

// header picks up the "Session: a1b2c3d4" and "Sequence: 3" lines the
// outbox asks the LLM to echo, written plainly or with Markdown decoration.
func (p *parser) header(line string) {
	if len(line) > 200 || strings.IndexByte(line, ':') < 0 || (p.reply.Session != "" && p.reply.Sequence != 0) {
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
	key = strings.ToLower(strings.TrimSpace(key))
	fields := strings.Fields(val)
	if len(fields) == 0 {
		return
	}
	v := fields[0]
	switch key {
	case "session", "session id", "sessionid":
		if p.reply.Session == "" && isSessionID(v) {
			p.reply.Session = strings.ToLower(v)
		}
	case "sequence", "seq":
		if n, err := strconv.Atoi(v); err == nil && n > 0 && p.reply.Sequence == 0 {
			p.reply.Sequence = n
		}
	}
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
