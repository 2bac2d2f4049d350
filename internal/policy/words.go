package policy

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// outputPlaceholder stands for the output of a command or process
// substitution when a word is re-read as shell code, so that the
// substitution's own commands, already found once, are not found twice.
const outputPlaceholder = "$__output__"

// word is one shell word as far as it is known before the command runs.
type word struct {
	// value is the word after quote removal; exact only when the word is
	// literal, otherwise its known parts with the rest as written.
	value string
	// code is what a shell sees when it runs the word as code: literal parts
	// unquoted, expansions as written, substitutions as a placeholder.
	code string
	src  string // as written, for messages
	// expands is set by a parameter, arithmetic, command or process
	// expansion: the value is computed at run time.
	expands bool
	glob    bool // an unquoted pattern: the value depends on the files present
	// optLike means the word may turn into an option at run time: its
	// value starts with a computed part, or with "-" and then one.
	optLike bool
	// split means an unquoted expansion may split the word into several
	// fields, or none.
	split bool
	// tail is the literal text after the last computed part; a program's
	// base name is known when it holds a "/" and nothing computed follows.
	tail string
	// hidden marks a word that stands for arguments supplied at run time
	// (xargs input), not written in the command.
	hidden bool
	node   *syntax.Word
}

// computed reports whether the word's value is only known at run time.
func (w word) computed() bool { return w.expands || w.glob }

// shown is the word as messages and Invocation.Args show it.
func (w word) shown() string {
	if w.computed() {
		return w.src
	}
	return w.value
}

// words resolves a command's words, applying bash brace expansion first,
// because `{sudo,ls}` runs sudo.
func (a *analyzer) words(args []*syntax.Word) []word {
	out := make([]word, 0, len(args))
	for _, w := range args {
		for _, e := range braces(w) {
			r := a.word(e)
			if e != w {
				// An expanded word has no source text of its own.
				r.src = a.print(e)
			}
			out = append(out, r)
		}
	}
	return out
}

// braces expands the brace expressions of w without changing the parsed
// tree, which other passes walk too. An expansion too large to list is
// left as it is and then counts as computed.
func braces(w *syntax.Word) []*syntax.Word {
	c := *w
	if !syntax.SplitBraces(&c) {
		return []*syntax.Word{w}
	}
	var out []*syntax.Word
	for e, err := range expand.BracesSeq(nil, &c) {
		if err != nil {
			return []*syntax.Word{&c}
		}
		out = append(out, e)
	}
	return out
}

// wordBuilder accumulates a word's value and code part by part.
type wordBuilder struct {
	a      *analyzer
	w      word
	value  strings.Builder
	code   strings.Builder
	prefix bool // still inside the literal prefix of the word
	lead   strings.Builder
	tail   strings.Builder
	// escapes lists what a backslash escapes inside double quotes; a
	// here-document body does not escape '"'.
	escapes string
}

// word resolves one word: quote removal for literal parts, and notes on
// what is computed at run time.
func (a *analyzer) word(n *syntax.Word) word {
	b := &wordBuilder{a: a, prefix: true, escapes: "$`\"\\\n"}
	b.parts(n.Parts, false)
	return b.finish(n)
}

// hereDoc resolves the body of a here-document; a quoted delimiter makes
// the body literal.
func (a *analyzer) hereDoc(r *syntax.Redirect) word {
	if r.Hdoc == nil {
		return word{}
	}
	b := &wordBuilder{a: a, prefix: true, escapes: "$`\\\n"}
	if quotedDelimiter(r.Word) {
		for _, p := range r.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				b.literal(l.Value)
			}
		}
	} else {
		b.parts(r.Hdoc.Parts, true)
	}
	return b.finish(r.Hdoc)
}

// quotedDelimiter reports whether a here-document's delimiter is quoted
// in any way, which turns off expansions in the body.
func quotedDelimiter(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		default:
			return true
		}
	}
	return false
}

func (b *wordBuilder) finish(n *syntax.Word) word {
	b.w.node = n
	b.w.value = b.value.String()
	b.w.code = b.code.String()
	b.w.tail = b.tail.String()
	b.w.src = b.a.text(n)
	if b.w.computed() {
		lead := b.lead.String()
		b.w.optLike = lead == "" || lead[0] == '-'
	}
	return b.w
}

// literal adds known text; in the literal prefix it also grows the lead.
func (b *wordBuilder) literal(s string) {
	b.value.WriteString(s)
	b.code.WriteString(s)
	b.tail.WriteString(s)
	if b.prefix {
		b.lead.WriteString(s)
	}
}

// computedPart adds a part whose value is only known at run time.
func (b *wordBuilder) computedPart(p syntax.WordPart, quoted bool) {
	b.prefix = false
	b.tail.Reset()
	b.w.expands = true
	if !quoted {
		b.w.split = true
	}
	src := b.a.text(p)
	b.value.WriteString(src)
	if hasSubstitution(p) {
		b.code.WriteString(outputPlaceholder)
	} else {
		b.code.WriteString(src)
	}
}

func (b *wordBuilder) parts(parts []syntax.WordPart, quoted bool) {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if quoted {
				b.literal(unescapeIn(p.Value, b.escapes))
			} else {
				b.unquotedLit(p.Value)
			}
		case *syntax.SglQuoted:
			b.literal(singleQuoted(p))
		case *syntax.DblQuoted:
			b.parts(p.Parts, true)
		case *syntax.ExtGlob, *syntax.BraceExp:
			b.prefix = false
			b.tail.Reset()
			b.w.glob = true
			src := b.a.text(p)
			b.value.WriteString(src)
			b.code.WriteString(src)
		default:
			b.computedPart(p, quoted)
		}
	}
}

// unquotedLit adds an unquoted literal, which may hold a glob pattern.
func (b *wordBuilder) unquotedLit(raw string) {
	i := globIndex(raw)
	if i < 0 {
		b.literal(unescape(raw))
		return
	}
	b.literal(unescape(raw[:i]))
	b.prefix = false
	b.tail.Reset()
	b.w.glob = true
	b.value.WriteString(unescape(raw[i:]))
	// The code keeps the pattern as written so a shell re-reading it sees
	// the same pattern.
	b.code.WriteString(raw[i:])
}

// globIndex returns the index in an unquoted literal of the first pattern
// character that a shell would expand, or -1.
func globIndex(raw string) int {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '*', '?':
			return i
		case '[':
			if strings.IndexByte(raw[i+1:], ']') >= 0 {
				return i
			}
		}
	}
	return -1
}

// unescape removes backslashes as an unquoted shell word does.
func unescape(raw string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var s strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) {
			i++
			if raw[i] != '\n' {
				s.WriteByte(raw[i])
			}
			continue
		}
		s.WriteByte(c)
	}
	return s.String()
}

// unescapeIn removes the backslashes that escape one of the characters in
// escapes, as inside double quotes or a here-document.
func unescapeIn(raw, escapes string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var s strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) && strings.IndexByte(escapes, raw[i+1]) >= 0 {
			i++
			if raw[i] != '\n' {
				s.WriteByte(raw[i])
			}
			continue
		}
		s.WriteByte(c)
	}
	return s.String()
}

// singleQuoted returns the value of '...' or of $'...' with its escapes
// decoded, so that $'\x73udo' is sudo.
func singleQuoted(q *syntax.SglQuoted) string {
	if !q.Dollar {
		return q.Value
	}
	s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{q}})
	if err != nil {
		return q.Value
	}
	return s
}

// hasSubstitution reports whether a node runs commands of its own.
func hasSubstitution(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			found = true
		}
		return !found
	})
	return found
}

// hasProcSubst reports whether a word contains a process substitution.
func hasProcSubst(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ProcSubst); ok {
			found = true
		}
		return !found
	})
	return found
}
