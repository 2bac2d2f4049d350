package policy

import "strings"

type tokenKind uint8

const (
	tokOption   tokenKind = iota // a literal option, before any "--"
	tokOperand                   // a literal operand
	tokComputed                  // known only at run time
)

// token is one argument classified for rule matching.
type token struct {
	kind  tokenKind
	value string
	// afterOption marks an operand right after an option without "=",
	// which may be its value (git -C dir).
	afterOption bool
	optLike     bool // a computed argument that may turn into an option
}

// tokens classifies a program's arguments, dropping the "--" ending options.
func tokens(args []word) []token {
	out := make([]token, 0, len(args))
	ended, prevOption := false, false
	for _, w := range args {
		v := w.value
		switch {
		case w.computed():
			out = append(out, token{kind: tokComputed, value: v, optLike: w.optLike && !ended})
			prevOption = false
		case !ended && v == "--":
			ended, prevOption = true, false
		case !ended && len(v) > 1 && v[0] == '-':
			out = append(out, token{kind: tokOption, value: v})
			prevOption = !strings.Contains(v, "=")
		default:
			out = append(out, token{kind: tokOperand, value: v, afterOption: prevOption})
			prevOption = false
		}
	}
	return out
}

// hasOption reports whether an option of the rule is among the arguments.
func hasOption(toks []token, opt string, m matchMode) bool {
	for _, t := range toks {
		switch t.kind {
		case tokOption:
			if optionMatches(opt, t.value, !m.every) {
				return true
			}
		case tokComputed:
			if m.computed && t.optLike {
				return true
			}
		}
	}
	return false
}

// optionMatches reports whether a rule option matches one argument: -r
// also in -rf, longer ones whole with or without "=value", and with
// abbrev a --name also as GNU programs shorten it (--rec).
func optionMatches(opt, arg string, abbrev bool) bool {
	if len(opt) == 2 {
		return !strings.HasPrefix(arg, "--") && strings.IndexByte(arg[1:], opt[1]) >= 0
	}
	name, _, _ := strings.Cut(arg, "=")
	if name == opt {
		return true
	}
	return abbrev && strings.HasPrefix(opt, "--") && strings.HasPrefix(name, "--") && len(name) > 2 && strings.HasPrefix(opt, name)
}

// matchOperands reports whether the patterns match the first operands in
// order. Words that may be an option's value are read both ways, computed
// ones may stand for any number of operands.
func matchOperands(pats []matcher, toks []token, m matchMode) bool {
	if len(pats) == 0 {
		return true
	}
	om := operandMatch{pats: pats, toks: toks, mode: m, memo: make([]int8, (len(pats)+1)*(len(toks)+1))}
	return om.match(0, 0)
}

// operandMatch is one run of matchOperands; remembering each answer keeps
// reading ambiguous words both ways linear in their number.
type operandMatch struct {
	pats []matcher
	toks []token
	mode matchMode
	memo []int8 // 0 unknown, 1 match, -1 no match
}

// match reports whether pats[p:] match the operands in toks[t:].
func (om *operandMatch) match(p, t int) bool {
	if p == len(om.pats) {
		return true
	}
	if t == len(om.toks) {
		return false
	}
	key := p*(len(om.toks)+1) + t
	if om.memo[key] == 0 {
		om.memo[key] = -1
		if om.step(p, t) {
			om.memo[key] = 1
		}
	}
	return om.memo[key] > 0
}

// step reads token t against pattern p.
func (om *operandMatch) step(p, t int) bool {
	tok := om.toks[t]
	switch tok.kind {
	case tokOption:
		return om.match(p, t+1)
	case tokComputed:
		if om.mode.computed {
			return true
		}
		// Surely, it could shift the operands: nothing after is certain.
		return !om.mode.every && om.match(p, t+1)
	}
	asOperand := om.pats[p].MatchString(tok.value) && om.match(p+1, t+1)
	if !tok.afterOption {
		return asOperand
	}
	asValue := om.match(p, t+1)
	if om.mode.every {
		return asOperand && asValue
	}
	return asOperand || asValue
}
