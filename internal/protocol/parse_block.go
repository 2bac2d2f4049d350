package protocol

import (
	"cmp"
	"strings"

	"github.com/courier-agent/courier/internal/command"
)

// bodyScan is where a block's body ends and why.
type bodyScan struct {
	body   string // the lines between the tags, each with its "\n"
	closed bool
	resume cursor // where parsing goes on
	// stop is the tag that ended an unclosed body early (line is 0-based);
	// stop.name is "" when the reply ended first.
	stop tagAt
	// skipped are command tags inside an unclosed file body, not run.
	skipped  []tagAt
	nSkipped int
	// wrong is the first closing tag of another command inside the body
	// that closes nothing there, a likely typo for the missing one.
	wrong tagAt
}

// tagAt names a tag and its 0-based line.
type tagAt struct {
	name string
	line int
}

// maxListed bounds the tags an error message lists.
const maxListed = 5

// scanBody finds the end of the body of a typ block that starts at from.
// Every line is looked at once: parsing goes on where the scan stopped.
func (p *parser) scanBody(typ command.Type, from cursor) bodyScan {
	fileBody := typ == command.CreateFile || typ == command.EditFile
	closer := "[/" + string(typ) + "]"
	var sc bodyScan
	opened := map[command.Type]bool{} // commands opened inside the body
	c := from
	for !p.done(c) {
		line, next := p.lineAt(c)
		// The closing tag as the protocol writes it, maybe indented.
		if len(line) >= len(closer) && line[skipBlanks(line, 0):] == closer {
			sc.body, sc.closed, sc.resume = p.text[from.pos:c.pos], true, next
			return sc
		}
		t := readTag(line)
		switch {
		case t.kind == kindClose && t.name == string(typ):
			sc.body, sc.closed, sc.resume = p.text[from.pos:c.pos], true, next
			return sc
		case t.kind == kindClose && sc.wrong.name == "" && !opened[typeOf(t.name)] && isCommandName(t.name):
			sc.wrong = tagAt{t.name, c.line}
		case t.kind == kindOpen && (!fileBody || t.typ == typ):
			sc.body, sc.resume, sc.stop = p.text[from.pos:c.pos], c, tagAt{string(t.typ), c.line}
			p.ahead, p.aheadAt = t, c.pos+1
			return sc
		case t.kind == kindOpen:
			opened[t.typ] = true
			if len(sc.skipped) < maxListed {
				sc.skipped = append(sc.skipped, tagAt{string(t.typ), c.line})
			}
			sc.nSkipped++
		}
		c = next
	}
	if from.pos < len(p.text) {
		sc.body = p.text[from.pos:]
	}
	sc.resume = c
	return sc
}

// block handles a command with a body, whose opening tag t is at c.
func (p *parser) block(c cursor, t *tagLine, next cursor) cursor {
	var sc bodyScan
	if t.hasInline {
		sc = bodyScan{body: t.inline + "\n", closed: true, resume: next}
	} else {
		sc = p.scanBody(t.typ, next)
		if lead := leadText(t); lead != "" {
			sc.body = lead + "\n" + sc.body
		}
	}
	var path, problem string
	// A final [DONE] without its closing tag still ends the session.
	if sc.closed || t.typ == command.Done && sc.stop.name == "" {
		if !sc.closed {
			sc.body = dropDanglingFence(sc.body)
		}
		var cmd command.Command
		if problem = build(&cmd, t, sc.body, c.line+1); problem == "" {
			p.add(&cmd, c.line, sc.resume.line)
			return sc.resume
		}
		path = cmd.Path
	} else {
		path, problem = blockPath(t)
	}
	p.fail(c.line, sc.resume.line, path, func() string {
		msg := ""
		if problem != "" {
			msg = tagProblem(t, c.line+1, path, problem)
		}
		if !sc.closed {
			if msg != "" {
				msg = " Also: " + msg
			}
			msg = unclosedMessage(t, c.line, path, sc) + msg
		}
		return msg
	})
	return sc.resume
}

// blockPath is the path of a block that will not run, for its message.
func blockPath(t *tagLine) (string, string) {
	m, problem := tagAttrs(t)
	if t.typ != command.CreateFile && t.typ != command.EditFile {
		return "", problem
	}
	path, pathProblem := tagPath(m)
	return path, cmp.Or(problem, pathProblem)
}

// leadText is text after a [MESSAGE] or [DONE] tag on its own line, which
// starts the body; after other tags it is a mistake reported by build.
func leadText(t *tagLine) string {
	if t.typ != command.Message && t.typ != command.Done {
		return ""
	}
	return trimLead(t.trailing)
}

// selfClosing handles DELETE_FILE and READ_FILE. A needless closing tag
// right after (blank lines allowed) is taken as part of the command;
// otherwise the blank lines looked at are prose.
func (p *parser) selfClosing(c cursor, t *tagLine, next cursor) cursor {
	var cmd command.Command
	problem := build(&cmd, t, "", c.line+1)
	path := cmd.Path
	end, blanks := next, p.skipBlankLines(next)
	if !p.done(blanks) {
		line, after := p.lineAt(blanks)
		ct := readTag(line)
		if ct.kind == kindClose && ct.name == t.name {
			end = after
		}
		p.ahead, p.aheadAt = ct, blanks.pos+1
	}
	if problem != "" {
		p.fail(c.line, end.line, path, func() string { return tagProblem(t, c.line+1, path, problem) })
	} else {
		p.add(&cmd, c.line, end.line)
	}
	if end == next && blanks != next {
		p.prose(next.line, blanks.line)
		return blanks
	}
	return end
}

// unknown handles a tag line whose name courier does not know. It is
// reported when it looks like a command: a near miss of a known name,
// attributes, or an UPPER_CASE name with its closing tag (spelt the same)
// before the next tag line.
func (p *parser) unknown(c cursor, u *tagLine, next cursor) cursor {
	stop, end := next, next // stop: the first line after the text lines that follow the tag
	closed := false
	for !p.done(stop) {
		line, after := p.lineAt(stop)
		t := readTag(line)
		if t.kind == kindText {
			stop = after
			continue
		}
		if closed = t.kind == kindClose && t.written == u.written; closed {
			end = after
		}
		p.ahead, p.aheadAt = t, stop.pos+1
		break
	}
	if !u.commandLike() && !(closed && isUpperName(u.written)) {
		return p.proseUpTo(c, next, stop)
	}
	p.fail(c.line, end.line, "", func() string { return unknownMessage(u.words, c.line, end.line, closed) })
	return end
}

// proseUpTo records the tag line at c as prose and goes on at next, or at
// stop when the text lines a scan found up to it need nothing more of the
// main loop (no reasoning tag, no header echo): they are not read again.
func (p *parser) proseUpTo(c, next, stop cursor) cursor {
	to := min(stop.pos, len(p.text))
	between := p.text[min(next.pos, to):to]
	if stop == next || strings.IndexByte(between, '<') >= 0 ||
		!p.seenCommand && strings.IndexByte(between, ':') >= 0 {
		p.prose(c.line, next.line)
		return next
	}
	for l := next; !p.maybeBody && l.pos < stop.pos; {
		var line string
		line, l = p.lineAt(l)
		p.loose(line)
	}
	p.prose(c.line, stop.line)
	return stop
}

// strayCloser handles a closing tag of a block command that opens nowhere:
// reported when lines before it could be a block whose opening tag was
// lost, ignored otherwise (see loose). Closers of DELETE_FILE and READ_FILE
// are harmless.
func (p *parser) strayCloser(c cursor, t *tagLine, next cursor) bool {
	typ := typeOf(t.name)
	if typ == "" || typ == command.DeleteFile || typ == command.ReadFile {
		return false
	}
	if !p.maybeBody {
		p.prose(c.line, next.line)
		return true
	}
	p.fail(c.line, next.line, "", func() string { return strayMessage(typ, c.line) })
	return true
}

// skipBlankLines returns the first line from c on that is not blank (or
// the end).
func (p *parser) skipBlankLines(c cursor) cursor {
	for !p.done(c) {
		if c.pos < len(p.text) && p.text[c.pos] == '\n' { // the most common blank line
			c = cursor{c.pos + 1, c.line + 1}
			continue
		}
		line, after := p.lineAt(c)
		if !isBlankLine(line) {
			return c
		}
		c = after
	}
	return c
}
