package protocol

import (
	"strconv"
	"strings"
	"unicode"
)

// header picks up the "Session: a1b2c3d4" and "Sequence: 3" lines the
// outbox asks the LLM to echo, written plainly or with Markdown decoration.
func (p *parser) header(line string) {
	if len(line) > maxHeaderLine || (p.reply.Session != "" && p.reply.Sequence != 0) {
		return
	}
	s := trimLine(line)
	// Every key starts with 's': most lines are refused before copying.
	if lead := strings.TrimLeftFunc(s, func(r rune) bool { return strings.ContainsRune("*_`#>-+", r) || unicode.IsSpace(r) }); lead == "" || lead[0]|0x20 != 's' {
		return
	}
	s = strings.TrimLeft(strings.NewReplacer("*", "", "_", "", "`", "").Replace(s), "#>-+ \t")
	key, val, _ := strings.Cut(s, ":")
	words := strings.Fields(val)
	if len(words) == 0 {
		return
	}
	key, val = strings.TrimSpace(key), words[0]
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

// asciiFold reports whether s is want (ASCII) in any ASCII case: with as
// many bytes, no other character folds to an ASCII one.
func asciiFold(s, want string) bool { return len(s) == len(want) && strings.EqualFold(s, want) }

func isSessionID(s string) bool {
	return len(s) == 8 && strings.Trim(s, "0123456789abcdefABCDEF") == ""
}
