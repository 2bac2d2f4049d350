package protocol

import (
	"strconv"
	"strings"

	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
)

// Reasoning sections (<think>...</think>, <thinking>...</thinking>) are
// drafts, not the answer: commands inside them are ignored. Some local
// models print only the closing </think> (the opening one is in their
// prompt template); then everything before it is reasoning. A <think> that
// never closes makes the rest of the reply reasoning, since the model was
// cut off while still drafting; commands in it are reported, not run.

// hasPrefixFold is strings.HasPrefix ignoring ASCII case, for an ASCII
// prefix.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && asciiFold(s[:len(prefix)], prefix)
}

// thinkOpen reports a line that starts a reasoning section and returns
// the text after the opening tag.
func thinkOpen(line string) (string, bool) {
	s := line[skipBlanks(line, 0):]
	if !strings.HasPrefix(s, "<") {
		return "", false
	}
	s = trimLine(s)
	for _, tag := range []string{"<think>", "<thinking>"} {
		if hasPrefixFold(s, tag) {
			return s[len(tag):], true
		}
	}
	return "", false
}

// hasThinkClose reports whether s contains </think> or </thinking>.
func hasThinkClose(s string) bool {
	for i := strings.IndexByte(s, '<'); i >= 0; i = strings.IndexByte(s, '<') {
		if s = s[i:]; hasPrefixFold(s, "</think>") || hasPrefixFold(s, "</thinking>") {
			return true
		}
		s = s[1:]
	}
	return false
}

// isOrphanClose reports a line that starts or ends with a closing think tag.
func isOrphanClose(line string) bool {
	s := trimLine(line)
	for _, end := range []string{"</think>", "</thinking>"} {
		if len(s) >= len(end) && asciiFold(s[len(s)-len(end):], end) {
			return true
		}
	}
	return hasPrefixFold(s, "</think")
}

// think handles a reasoning section starting at c, if there is one; the
// line holds a '<'.
func (p *parser) think(c cursor, line string, next cursor) (cursor, bool) {
	if rest, ok := thinkOpen(line); ok {
		p.seenThink = true
		if hasThinkClose(rest) {
			p.prose(c.line, next.line)
			return next, true
		}
		return p.skipThink(c, next), true
	}
	if !p.seenThink && isOrphanClose(line) {
		// Everything so far was reasoning: forget what it seemed to say.
		p.seenThink = true
		p.reply, p.cmds = frontend.Parsed{}, nil
		p.spans = p.spans[:0]
		p.errors, p.more, p.moreCmd, p.seenCommand, p.maybeBody = 0, 0, -1, false, false
		p.prose(0, next.line)
		return next, true
	}
	return c, false
}

// skipThink skips a reasoning section whose opening line is at c.
func (p *parser) skipThink(c, next cursor) cursor {
	var tags []tagAt
	n := 0
	for e := next; !p.done(e); {
		line, after := p.lineAt(e)
		if hasThinkClose(line) {
			p.prose(c.line, after.line)
			return after
		}
		if t := readTag(line); t.kind == kindOpen {
			if len(tags) < maxListed {
				tags = append(tags, tagAt{string(t.typ), e.line})
			}
			n++
		}
		e = after
	}
	end := strings.Count(p.text, "\n") + 1
	if n == 0 {
		p.prose(c.line, end)
	} else {
		p.fail(c.line, end, "", func() string { return thinkMessage(c.line, tags, n) })
	}
	return cursor{len(p.text) + 1, end}
}

func thinkMessage(line0 int, tags []tagAt, n int) string {
	return "The reasoning section opened at line " + strconv.Itoa(line0+1) +
		" (<think>) is never closed, so everything after it counts as reasoning and the " +
		human.Count(n, "command tag", "") + " in it (" + listTags(tags, n) + ") " + pick(n, "was", "were") +
		" not run. Close the reasoning with </think> before the commands and resend them."
}
