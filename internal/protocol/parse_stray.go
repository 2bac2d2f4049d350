package protocol

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A closing tag whose opening tag is nowhere is reported only when a block
// may have been lost before it: the lines since the last command (or the
// reply's start) hold something that reads like a block's body. A closer
// on the first line, after only the header echo or plain sentences, or
// right after another block's closer, could not have closed anything that
// was lost, and is ignored, so that it holds back no DONE.

// loose notes a text line outside every block.
func (p *parser) loose(line string) {
	if !p.maybeBody && !proseLine(line) {
		p.maybeBody = true
	}
}

// proseLine reports whether a line outside blocks reads as prose or a
// header echo, not as a line of code or file content: after Markdown
// emphasis, heading, quote and list marks it starts with a letter, holds
// none of the characters code is made of, and ends a sentence or is a
// short "Key: value". A code fence, an opening tag inside the line, a
// heading of a Markdown file all count as possible body lines.
func proseLine(line string) bool {
	s := strings.ReplaceAll(strings.TrimSpace(line), "**", "")
	s = strings.TrimRight(strings.TrimLeft(s, "*_#>-+ \t"), "*_ \t")
	if s == "" {
		return !strings.Contains(line, "#") // a rule or emphasis alone, not an empty heading
	}
	if r, _ := utf8.DecodeRuneInString(s); !unicode.IsLetter(r) {
		return false
	}
	if strings.ContainsAny(s, "(){}[]<>;=$|\\`") {
		return false
	}
	switch s[len(s)-1] {
	case '.', '!', '?', ':':
		return true
	}
	key, _, ok := strings.Cut(s, ": ")
	return ok && len(key) <= 20 && strings.IndexFunc(key, func(r rune) bool { return !unicode.IsLetter(r) && r != ' ' }) < 0
}
