package protocol

import (
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
)

// Reply is a parsed reply.
type Reply struct {
	// Session is the session id the reply echoes ("Session: a1b2c3d4"
	// before the first command), lower case; "" if none.
	Session string
	// Sequence is the echoed "Sequence: 3"; 0 if none.
	Sequence int
	// Commands are in order of appearance, PARSE_ERROR entries included.
	Commands []command.Command
}

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
//   - A closing tag that closes nothing is reported when the lines before it
//     may be a block whose opening tag was lost, and ignored when nothing
//     before it could have been its block (see parse_stray.go).
//   - File content is the body's lines each ending in "\n" (an empty body is
//     ""), so a body of N lines makes a file of N lines; see fileText for
//     the fence and indentation rules.
func Parse(text string) Reply {
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
	at    int   // offset of the line the main loop is at
	reply Reply // Session and Sequence; the commands are in cmds
	cmds  cmdList
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
	// recent holds the last lines classified, by offset: a scan that stops
	// at a tag line hands it back to the caller, which looks at it again.
	// Three slots: one head may have pinned, and the two a scan alternates
	// (a scan's result stays valid until its next call but one).
	recent     [3]classified
	recentNext int
	pinned     int // the slot head handed out, which scans leave alone; -1 if none
	// The next '<' (reasoning tags), ':' (header echo) and '[' (tags) for
	// the main loop, and the next '[' and '<' for scans ahead of it.
	lt, colon, brack ahead
	scanBrack        ahead
	scanLt           ahead
	upper            upperNames
	edits            editSlab
	near             nearMisses
	textLine         tagLine // what every text line is; never changed
	cur              tagLine // the line the main loop handles (see head)
}

// classified is a line's offset and what classify made of it.
type classified struct {
	pos int
	t   tagLine
}

// cmdList collects commands in one slice, made as large as the reply
// probably needs from a cheap guess, so that it is usually never copied.
// When the guess falls short, it grows to what the part of the reply read
// so far predicts for the whole, within four times its size.
type cmdList struct {
	list  []command.Command
	guess int // the first size: see newParser
	// errs counts the PARSE_ERROR entries, which stop at maxErrors + 1
	// and so tell nothing of what is to come.
	errs int
}

// maxFirstGuess bounds the first size guessed from a sample of the reply,
// so that a sample dense with tags cannot make it huge for a reply whose
// rest holds none.
const maxFirstGuess = 1 << 16

// add appends c and returns its index; at is how far into the reply of
// size total the parser is.
func (l *cmdList) add(c *command.Command, at, total int) int {
	if len(l.list) == cap(l.list) {
		l.grow(at, total, c.Type != command.ParseError)
	}
	l.list = append(l.list, *c)
	if c.Type == command.ParseError {
		l.errs++
	}
	return len(l.list) - 1
}

// slot appends a zero command for a builder to fill in place, which saves
// copying it, and the garbage collector's write barriers, into the list.
func (l *cmdList) slot(at, total int) *command.Command {
	if len(l.list) == cap(l.list) {
		l.grow(at, total, true)
	}
	l.list = l.list[:len(l.list)+1]
	return &l.list[len(l.list)-1]
}

// drop takes back the last slot, zeroed for the next.
func (l *cmdList) drop() {
	l.list[len(l.list)-1] = command.Command{}
	l.list = l.list[:len(l.list)-1]
}

// grow makes room for one more command, real or a PARSE_ERROR entry.
func (l *cmdList) grow(at, total int, real bool) {
	n := len(l.list)
	size := n + n/2 + 8
	switch {
	case n == l.errs && real:
		// The first real command: the guess is for those.
		size = n + l.guess
	case n > l.errs:
		// Commands so far per byte read, for the whole reply, and an
		// eighth more. The bound keeps a reply whose commands all come
		// first from costing more than four times what it needs.
		est := int(float64(n-l.errs)*float64(total)/float64(max(at, 1))*1.125) + l.errs
		size = max(size, min(est, 4*n))
	}
	list := make([]command.Command, n, size)
	copy(list, l.list)
	l.list = list
}

func (l *cmdList) all() []command.Command {
	if len(l.list) == 0 {
		return nil
	}
	return l.list
}

// cursor is the start of a line: its byte offset and 0-based number. An
// offset beyond the text means there are no more lines.
type cursor struct{ pos, line int }

func newParser(text string, spans bool) *parser {
	if strings.Contains(text, "\r\n") {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	p := &parser{text: text, moreCmd: -1, trackSpans: spans,
		lt: newAhead('<'), colon: newAhead(':'), brack: newAhead('['), scanBrack: newAhead('['), scanLt: newAhead('<')}
	// Every block has a closing tag, and READ_FILE and DELETE_FILE are
	// tags alone: count them in the first 64 KB and extrapolate.
	sample := text[:min(len(text), 64<<10)]
	tags := strings.Count(sample, "[/") + strings.Count(sample, "READ_FILE ") + strings.Count(sample, "DELETE_FILE ")
	guess := tags * (len(text)/max(len(sample), 1) + 1)
	p.cmds.guess = min(guess+guess/8, len(text)/32, maxFirstGuess) + 8
	p.recent[0].pos, p.recent[1].pos, p.recent[2].pos, p.pinned = -1, -1, -1, -1
	return p
}

// classify is what a scan needs to know of the line at c: what kind of
// tag it is and its name (see tagLine.classify). The result is kept for
// the next look at the same line, and is valid until the next call; most
// lines are text and are refused without building anything.
func (p *parser) classify(c cursor, line string) *tagLine {
	if !maybeTag(line) {
		return &p.textLine
	}
	for i := range p.recent {
		if p.recent[i].pos == c.pos {
			return &p.recent[i].t
		}
	}
	k := p.recentNext
	if k == p.pinned {
		k = nextSlot(k)
	}
	p.recentNext = nextSlot(k)
	r := &p.recent[k]
	r.pos = c.pos
	r.t.classify(line, false, &p.upper)
	return &r.t
}

func nextSlot(k int) int {
	if k++; k == len(parser{}.recent) {
		return 0
	}
	return k
}

// head reads the line at c that the main loop is at, with the attributes
// of a tag that starts a command. The result is p.cur or a slot of recent
// that scans leave alone (pinned): it stays valid while the command is
// handled.
func (p *parser) head(c cursor, line string) *tagLine {
	if !maybeTag(line) {
		return &p.textLine
	}
	for i := range p.recent {
		// A scan's reading is all there is to know of a tag without
		// attributes; the slot is kept from scans while it is handled.
		if r := &p.recent[i]; r.pos == c.pos && (r.t.kind != kindOpen || r.t.nattrs == 0 && !r.t.hasBare) {
			p.pinned = i
			return &r.t
		}
	}
	p.pinned = -1
	p.cur.classify(line, true, &p.upper)
	return &p.cur
}

func (p *parser) run() {
	for c := (cursor{}); !p.done(c); {
		if p.maybeBody && !likelyLook(p.text, c.pos) {
			if next := p.skipPlain(c); next != c {
				p.prose(c.line, next.line)
				c = next
				continue
			}
		}
		p.at = c.pos
		line, next := p.lineAt(c)
		if isBlankASCII(line) {
			// A run of blank lines is prose whatever else is going on.
			next = p.skipBlankLines(c)
			p.prose(c.line, next.line)
			c = next
			continue
		}
		c = p.step(c, line, next)
	}
	if p.moreCmd >= 0 {
		e := &p.cmds.list[p.moreCmd]
		e.Error = moreProblems(p.more, e.Line)
	}
	p.reply.Commands = p.cmds.all()
}

func (p *parser) done(c cursor) bool { return c.pos > len(p.text) }

// isBlankASCII reports an empty line or one of spaces and tabs.
func isBlankASCII(line string) bool {
	for i := 0; i < len(line); i++ {
		if !isBlank(line[i]) {
			return false
		}
	}
	return true
}

// skipPlain passes over the lines from c on that are prose whatever they
// hold, once a command was seen and a line that may be a block's body
// (see loose): only a line with a tag ('['), a reasoning tag ('<') or,
// before the first command, a header echo (':') needs a look. It returns
// c when the line at c needs one.
func (p *parser) skipPlain(c cursor) cursor {
	t := min(p.brack.next(p.text, c.pos), p.lt.next(p.text, c.pos))
	if !p.seenCommand && (p.reply.Session == "" || p.reply.Sequence == 0) {
		t = min(t, p.colon.next(p.text, c.pos))
	}
	return p.lineOf(c, t)
}

// likelyLook is a guess that the line at pos needs a look, by its first
// byte: it may start a tag or a reasoning tag. Trying to pass over such
// lines, when each holds one, costs more than it saves.
func likelyLook(text string, pos int) bool {
	if pos >= len(text) {
		return false
	}
	switch c := text[pos]; {
	case c == '[', c == '<', c == '-', c == '*', c == '+', c >= '0' && c <= '9', c >= utf8.RuneSelf:
		return true
	}
	return false
}

// lineOf returns the cursor of the line that holds offset t, at or after
// c; for t == len(text), where nothing was found, the end.
func (p *parser) lineOf(c cursor, t int) cursor {
	if t >= len(p.text) {
		return cursor{len(p.text) + 1, c.line + strings.Count(p.text[c.pos:], "\n") + 1}
	}
	start := c.pos + strings.LastIndexByte(p.text[c.pos:t], '\n') + 1
	if start == c.pos {
		return c
	}
	return cursor{start, c.line + strings.Count(p.text[c.pos:start], "\n")}
}

// ahead is where the next occurrence of a byte is in the text, found once
// for many lines rather than searched for in every line.
type ahead struct {
	b        byte
	from, at int // at is the first b at or after from; len(text) when none
}

// newAhead is an ahead for b that has not looked yet.
func newAhead(b byte) ahead { return ahead{b: b, from: 1, at: 0} }

// next returns the offset of the first b at or after pos, len(text) when
// there is none.
func (a *ahead) next(text string, pos int) int {
	if a.from <= pos && pos <= a.at {
		return a.at
	}
	return a.find(text, pos)
}

func (a *ahead) find(text string, pos int) int {
	a.from = pos
	if i := strings.IndexByte(text[pos:], a.b); i >= 0 {
		a.at = pos + i
	} else {
		a.at = len(text)
	}
	return a.at
}

// in reports whether the line at c (of length n) holds the byte.
func (a *ahead) in(text string, c cursor, n int) bool {
	return a.next(text, c.pos) < c.pos+n
}

// lineAt returns the line at c, without its "\n", and the next line's cursor.
func (p *parser) lineAt(c cursor) (string, cursor) {
	rest := p.text[c.pos:]
	// Short lines are found faster by looking at eight bytes at once
	// than by a call to search.
	if len(rest) >= 8 {
		if i := newlineIn8(rest[:8]); i < 8 {
			return rest[:i], cursor{c.pos + i + 1, c.line + 1}
		}
	}
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		return rest[:i], cursor{c.pos + i + 1, c.line + 1}
	}
	return rest, cursor{len(p.text) + 1, c.line + 1}
}

// word8 is the first eight bytes of s as one word, the first the lowest.
func word8(s string) uint64 {
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// newlines8 is word8 of eight '\n'.
const newlines8 = 0x0a0a0a0a0a0a0a0a

// newlineIn8 returns the index of the first '\n' in s (eight bytes), or 8.
func newlineIn8(s string) int {
	w := word8(s)
	// The lowest byte of w that is '\n' is the lowest byte flagged here
	// (a borrow can only flag bytes above a zero byte of x).
	x := w ^ 0x0a0a0a0a0a0a0a0a
	return bits.TrailingZeros64((x-0x0101010101010101)&^x&0x8080808080808080) / 8
}

// step handles the line at c and returns where to go on.
func (p *parser) step(c cursor, line string, next cursor) cursor {
	// Only a line with a '<' can hold a reasoning tag.
	if p.lt.next(p.text, c.pos) < c.pos+len(line) {
		if r, ok := p.think(c, line, next); ok {
			return r
		}
	}
	t := p.head(c, line)
	switch t.kind {
	case kindOpen:
		p.seenCommand = true
		if t.typ == command.DeleteFile || t.typ == command.ReadFile {
			return p.selfClosing(c, t, next)
		}
		return p.block(c, t, next)
	case kindOther:
		return p.unknown(c, t, next)
	case kindClose:
		if p.strayCloser(c, t, next) {
			return next
		}
	}
	if !p.seenCommand && p.colon.in(p.text, c, len(line)) {
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
	i := p.cmds.add(cmd, p.at, len(p.text))
	p.span(first, end, i)
}

// placed records the command in the last slot, whose block covers lines
// [first, end).
func (p *parser) placed(first, end int) {
	p.maybeBody = false
	i := len(p.cmds.list) - 1
	p.cmds.list[i].Line = first + 1
	p.span(first, end, i)
}

// listing reports whether the next problem will be listed on its own,
// rather than counted in the summary entry.
func (p *parser) listing() bool { return p.errors < maxErrors }

// fail records a PARSE_ERROR covering lines [first, end). The message is
// built only if it will be listed.
func (p *parser) fail(first, end int, path string, msg func() string) {
	if !p.listing() {
		p.unlisted(first, end)
		return
	}
	p.errors++
	p.add(&command.Command{Type: command.ParseError, Error: msg(), Path: path}, first, end)
}

// unlisted is fail for a problem beyond maxErrors, counted in the summary
// entry; callers on busy paths use it to save making the message's
// closure.
func (p *parser) unlisted(first, end int) {
	p.errors++
	p.maybeBody = false
	if p.moreCmd < 0 {
		p.moreCmd = p.cmds.add(&command.Command{Type: command.ParseError, Line: first + 1}, p.at, len(p.text))
	}
	p.more++
	p.span(first, end, p.moreCmd)
}
