package policy

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// outputPlaceholder stands for a substitution's output when a word is
// re-read as code, so that its commands, already found, are not found twice.
const outputPlaceholder = "$__output__"

// word is one shell word as far as it is known before the command runs.
type word struct {
	// value is the word after quote removal, exact only when it is
	// literal; computed parts stay as written.
	value string
	// code is the word as a shell re-reading it sees it: literal parts
	// unquoted, expansions as written, substitutions as a placeholder.
	code    string
	src     string // as written, for messages
	expands bool   // a parameter, arithmetic, command or process expansion
	glob    bool   // an unquoted pattern
	// optLike: the value starts with a computed part, or "-" and then one,
	// so it may turn into an option at run time.
	optLike bool
	split   bool // an unquoted expansion may split it into several fields
	// tail is the literal text after the last computed part: a program's
	// base name is known when it holds a "/".
	tail   string
	hidden bool // stands for arguments supplied at run time (xargs input)
	node   *syntax.Word
}

func (w word) computed() bool { return w.expands || w.glob }

// shown is the word as messages show it.
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

// braces expands w's brace expressions without changing the parsed tree,
// which other passes walk too; one too large to list counts as computed.
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
	a                 *analyzer
	w                 word
	value, code, tail strings.Builder
	// escapes lists what a backslash escapes inside double quotes; a
	// here-document body does not escape '"'.
	escapes string
}

// word resolves one word: quote removal, and what is computed at run time.
func (a *analyzer) word(n *syntax.Word) word {
	b := &wordBuilder{a: a, escapes: "$`\"\\\n"}
	b.parts(n.Parts, false)
	return b.finish(n)
}

// hereDoc resolves the body of a here-document, where a quoted delimiter
// makes the body literal, or a here-string.
func (a *analyzer) hereDoc(r *syntax.Redirect) word {
	if r.Op == syntax.WordHdoc {
		return a.word(r.Word)
	}
	if r.Hdoc == nil {
		return word{}
	}
	b := &wordBuilder{a: a, escapes: "$`\\\n"}
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

// quotedDelimiter reports whether a here-document's delimiter is quoted,
// which turns off expansions in the body.
func quotedDelimiter(w *syntax.Word) bool {
	return w != nil && slices.ContainsFunc(w.Parts, func(p syntax.WordPart) bool {
		l, ok := p.(*syntax.Lit)
		return !ok || strings.Contains(l.Value, `\`)
	})
}

func (b *wordBuilder) finish(n *syntax.Word) word {
	b.w.node = n
	b.w.value = b.value.String()
	b.w.code = b.code.String()
	b.w.tail = b.tail.String()
	b.w.src = b.a.text(n)
	return b.w
}

// literal adds known text.
func (b *wordBuilder) literal(s string) {
	b.value.WriteString(s)
	b.code.WriteString(s)
	b.tail.WriteString(s)
}

// unknown starts a part known only at run time.
func (b *wordBuilder) unknown() {
	if !b.w.computed() {
		lead := b.value.String()
		b.w.optLike = lead == "" || lead[0] == '-'
	}
	b.tail.Reset()
}

// computedPart adds a part whose value is only known at run time.
func (b *wordBuilder) computedPart(p syntax.WordPart, quoted bool) {
	b.unknown()
	b.w.expands = true
	if !quoted {
		b.w.split = true
	}
	src := b.a.text(p)
	b.value.WriteString(src)
	if hasSubstitution(p, true) {
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
				b.literal(unescape(p.Value, b.escapes))
			} else {
				b.unquotedLit(p.Value)
			}
		case *syntax.SglQuoted:
			b.literal(singleQuoted(p))
		case *syntax.DblQuoted:
			b.parts(p.Parts, true)
		case *syntax.ExtGlob, *syntax.BraceExp:
			b.unknown()
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
		b.literal(unescape(raw, ""))
		return
	}
	b.literal(unescape(raw[:i], ""))
	b.unknown()
	b.w.glob = true
	b.value.WriteString(unescape(raw[i:], ""))
	b.code.WriteString(raw[i:]) // the pattern as a shell re-reading it sees it
}

// globIndex returns the index of the first pattern character of an
// unquoted literal, or -1.
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

// unescape removes the backslashes that escape one of the characters in
// escapes (any character when escapes is ""), as an unquoted word, double
// quotes or a here-document do; an escaped newline goes too.
func unescape(raw, escapes string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var s strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) && (escapes == "" || strings.IndexByte(escapes, raw[i+1]) >= 0) {
			i++
			if raw[i] == '\n' {
				continue
			}
		}
		s.WriteByte(raw[i])
	}
	return s.String()
}

// singleQuoted returns the value of '...' or $'...' ($'\x73udo' is sudo).
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

// hasSubstitution reports whether a node runs commands of its own: a
// process substitution, or with cmd also a command substitution.
func hasSubstitution(n syntax.Node, cmd bool) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ProcSubst:
			found = true
		case *syntax.CmdSubst:
			found = found || cmd
		}
		return !found
	})
	return found
}
