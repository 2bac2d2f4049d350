package agent

import (
	"regexp"
	"strings"

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/termtext"
)

// detailMax caps the text an error quotes from an agent or a server.
const detailMax = 300

// csi is a colour code or other CSI sequence, or a lone escape.
var csi = regexp.MustCompile("\x1b(\\[[^\x40-\x7e]*[\x40-\x7e]?)?")

// cleanLine makes hostile text from an agent or a server one safe line of
// an error: colour codes dropped, whitespace folded, cut to detailMax,
// nothing that could move the cursor or forge a line of courier's own.
func cleanLine(s string) string {
	return termtext.Safe(human.OneLine(csi.ReplaceAllString(s, ""), detailMax))
}

// lastLine is the last non-blank line of text, cleaned for an error.
func lastLine(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	return cleanLine(text[strings.LastIndexByte(text, '\n')+1:])
}
