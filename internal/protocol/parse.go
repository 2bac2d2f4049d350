package protocol

import (
	"strings"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
)

// Parse reads decoded reply text (see Decode). It never fails: whatever it
// cannot understand becomes a command.ParseError entry whose Error tells the
// LLM what to resend. Every command's Line is the 1-based line of its
// opening tag.
//
// The rules, beyond the protocol text:
//   - A tag counts only at the start of a line (after indentation, invisible
//     characters and one Markdown list marker); prose, fences and reasoning
//     sections (<think>...</think>) around blocks are ignored.
//   - A body ends at its closing tag line. A file body (CREATE_FILE,
//     EDIT_FILE) may contain other tags, so only a new tag of the same
//     command ends it early; other bodies end at any command tag. A block
//     ended early or by the end of the reply is reported, not run, except a
//     final [DONE] whose summary runs to the end of the reply.
//   - A closing tag that closes nothing is reported only when a block may
//     have been lost before it (see parse_stray.go).
//   - File content is the body's lines each ending in "\n" (see fileText,
//     and parse_chrome.go for a reply copied from the rendered page).
//   - A tag copied with Markdown's escapes ("\[CREATE\_FILE ...\]") is a
//     tag. A reply with no command but a tag where none counts is one
//     PARSE_ERROR saying so, not a turn of nothing.
func Parse(text string) frontend.Parsed {
	p := newParser(text, false)
	p.run()
	return p.reply
}

// span is a run of reply lines that is either prose or one command's block.
// The spans of a reply tile its lines exactly; the fuzz test checks this.
type span struct {
	first, end int // 0-based line numbers, end exclusive
	cmd        int // index into Reply.Commands, or -1 for prose
}

// maxErrors caps the PARSE_ERROR entries of one reply; the rest are
// summarised in one last entry, so that an adversarial reply cannot make
// the parser build millions of messages nobody will read.
const maxErrors = 100

// parser holds the state of one Parse call.
type parser struct {
	text  string
	reply frontend.Parsed // Session and Sequence; the commands are in cmds
	cmds  []command.Command
	// spans are recorded only for tests, since they cost memory per block.
	spans      []span
	trackSpans bool
	errors     int
	// more counts problems beyond maxErrors; moreCmd is the index of the
	// summary entry that stands for them, or -1.
	more, moreCmd int
	seenCommand   bool // header echo lines count only before the first tag
	seenThink     bool
	// maybeBody is set when a line since the last command could be part
	// of a block whose opening tag was lost (see loose).
	maybeBody bool
	// ahead is the tag of the line at offset aheadAt-1 (0: none), read to
	// see where a block or an unknown tag's lines end: the main loop takes
	// it from here, so that no tag line is read twice.
	ahead   tagLine
	aheadAt int
}

// cursor is the start of a line: its byte offset and 0-based number. An
// offset beyond the text means there are no more lines.
type cursor struct{ pos, line int }

func newParser(text string, spans bool) *parser {
	return &parser{text: strings.ReplaceAll(text, "\r\n", "\n"), moreCmd: -1, trackSpans: spans}
}

func (p *parser) run() {
	c := cursor{}
	for !p.done(c) {
		line, next := p.lineAt(c)
		if strings.Trim(line, " \t") == "" {
			// A run of blank lines is prose whatever else is going on.
			next = p.skipBlankLines(c)
			p.prose(c.line, next.line)
			c = next
			continue
		}
		c = p.step(c, line, next)
	}
	if len(p.cmds) == 0 {
		if at, tag, ok := mangledTag(p.text); ok {
			// Rather than a turn of nothing, the reply is one problem.
			p.spans = nil
			p.fail(0, c.line, "", func() string { return mangledMessage(at, tag) })
		}
	}
	if p.moreCmd >= 0 {
		e := &p.cmds[p.moreCmd]
		e.Error = moreProblems(p.more, e.Line)
	}
	p.reply.Commands = p.cmds
}

func (p *parser) done(c cursor) bool { return c.pos > len(p.text) }

// lineAt returns the line at c, without its "\n", and the next line's cursor.
func (p *parser) lineAt(c cursor) (string, cursor) {
	rest := p.text[c.pos:]
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		return rest[:i], cursor{c.pos + i + 1, c.line + 1}
	}
	return rest, cursor{len(p.text) + 1, c.line + 1}
}

// step handles the line at c and returns where to go on.
func (p *parser) step(c cursor, line string, next cursor) cursor {
	// Only a line with a '<' can hold a reasoning tag.
	if strings.IndexByte(line, '<') >= 0 {
		if r, ok := p.think(c, line, next); ok {
			return r
		}
	}
	t := p.ahead
	if p.aheadAt != c.pos+1 {
		t = readTag(line)
	}
	switch t.kind {
	case kindOpen:
		p.seenCommand = true
		if t.typ == command.DeleteFile || t.typ == command.ReadFile {
			return p.selfClosing(c, &t, next)
		}
		return p.block(c, &t, next)
	case kindOther:
		return p.unknown(c, &t, next)
	case kindClose:
		if p.strayCloser(c, &t, next) {
			return next
		}
	}
	if !p.seenCommand && strings.IndexByte(line, ':') >= 0 {
		p.header(line)
	}
	if t.kind == kindText {
		p.loose(line)
	}
	p.prose(c.line, next.line)
	return next
}

// prose records lines that are not part of any command.
func (p *parser) prose(first, end int) { p.span(first, end, -1) }

// span records that lines [first, end) belong to command cmd (-1: prose),
// merging with the span before when it is the same.
func (p *parser) span(first, end, cmd int) {
	if !p.trackSpans {
		return
	}
	if n := len(p.spans); n > 0 && p.spans[n-1].cmd == cmd && p.spans[n-1].end == first {
		p.spans[n-1].end = end
		return
	}
	p.spans = append(p.spans, span{first, end, cmd})
}

// add records a command whose block covers lines [first, end).
func (p *parser) add(cmd *command.Command, first, end int) {
	p.maybeBody = false
	cmd.Line = first + 1
	p.cmds = append(p.cmds, *cmd)
	p.span(first, end, len(p.cmds)-1)
}

// fail records a PARSE_ERROR covering lines [first, end). Beyond
// maxErrors it is only counted in the summary entry, its message not built.
func (p *parser) fail(first, end int, path string, msg func() string) {
	p.errors++
	if p.errors <= maxErrors {
		p.add(&command.Command{Type: command.ParseError, Error: msg(), Path: path}, first, end)
		return
	}
	p.maybeBody = false
	if p.moreCmd < 0 {
		p.cmds = append(p.cmds, command.Command{Type: command.ParseError, Line: first + 1})
		p.moreCmd = len(p.cmds) - 1
	}
	p.more++
	p.span(first, end, p.moreCmd)
}
