package agent

import (
	"strings"

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/termtext"
)

// detailMax caps the text an error quotes from an agent or a server.
const detailMax = 300

// cleanLine makes text from an agent or a server fit one line of an
// error: colour codes dropped, whitespace runs folded, cut to detailMax
// characters, and made safe for a terminal as everything courier prints
// is (termtext.Safe). The text is hostile: it must not move the cursor,
// clear the screen or forge a line of courier's own.
func cleanLine(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b { // ESC: a CSI sequence, or the lone escape, is dropped
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '[' {
			for i += 2; i < len(s) && (s[i] < 0x40 || s[i] > 0x7e); i++ {
			}
		}
	}
	return termtext.Safe(human.OneLine(b.String(), detailMax))
}

// lastLine is the last non-blank line of text, cleaned for an error.
func lastLine(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	return cleanLine(text)
}
