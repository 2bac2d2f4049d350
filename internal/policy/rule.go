package policy

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/pattern"

	"github.com/courier-agent/courier/internal/human"
)

// ErrInvalidRule is wrapped by every error about a rule's syntax.
var ErrInvalidRule = errors.New("invalid rule")

// The built-in checks, which rules name with a leading "@".
const (
	checkDynamic     = "@dynamic"
	checkDownload    = "@download"
	checkDevice      = "@device"
	checkDeviceWrite = "@device-write"
	checkUnparseable = "@unparseable"
	checkGitWrite    = "@git-write"
	checkRunsCode    = "@runs-code"
)

// checks lists the built-in checks (see the package documentation).
var checks = []string{checkDevice, checkDeviceWrite, checkDownload, checkDynamic, checkGitWrite, checkRunsCode, checkUnparseable}

// rule is one compiled entry of a Deny, Ask or Allow list.
type rule struct {
	text     string // the words, separated by one space: the rule's key
	decision Decision
	desc     string // the text after "#"
	user     bool   // from Config rather than Default
	check    string // the built-in check it names, or ""
	program  *regexp.Regexp
	full     bool // the program has a "/": match the whole path
	glob     bool // the program is a pattern
	options  []string
	operands []*regexp.Regexp
}

// parseRule compiles one rule (syntax in the package documentation).
func parseRule(text string, d Decision) (*rule, error) {
	pat, desc, _ := strings.Cut(text, "#")
	fields := strings.Fields(pat)
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: no program in it", ErrInvalidRule)
	}
	r := &rule{text: strings.Join(fields, " "), decision: d, desc: strings.TrimSpace(desc)}
	if strings.HasPrefix(fields[0], "@") {
		if !slices.Contains(checks, fields[0]) {
			return nil, fmt.Errorf("%w: unknown check %s (known: %s)", ErrInvalidRule, fields[0], strings.Join(checks, ", "))
		}
		if len(fields) > 1 {
			return nil, fmt.Errorf("%w: check %s takes no arguments", ErrInvalidRule, fields[0])
		}
		r.check = fields[0]
		return r, nil
	}
	p := fields[0]
	if strings.HasPrefix(p, "-") {
		return nil, fmt.Errorf("%w: it starts with an option, not a program", ErrInvalidRule)
	}
	if r.full = strings.Contains(p, "/"); r.full {
		p = path.Clean(p)
	}
	r.glob = pattern.HasMeta(p, 0) || strings.Contains(p, `\`)
	var err error
	// On a case-insensitive file system SUDO runs sudo.
	if r.program, err = compilePattern(p, true); err != nil {
		return nil, err
	}
	for _, f := range fields[1:] {
		switch {
		case !strings.HasPrefix(f, "-"):
			m, err := compilePattern(f, false)
			if err != nil {
				return nil, err
			}
			r.operands = append(r.operands, m)
		case f == "-" || f == "--" || strings.Contains(f, "="):
			return nil, fmt.Errorf("%w: %q is not an option a rule can match (write -x, -name or --name)", ErrInvalidRule, f)
		default:
			r.options = append(r.options, f)
		}
	}
	return r, nil
}

// compilePattern compiles a rule's shell pattern.
func compilePattern(p string, fold bool) (*regexp.Regexp, error) {
	mode := pattern.EntireString
	if fold {
		mode |= pattern.NoGlobCase
	}
	expr, err := pattern.Regexp(p, mode)
	if err == nil {
		var re *regexp.Regexp
		if re, err = regexp.Compile(expr); err == nil {
			return re, nil
		}
	}
	return nil, fmt.Errorf("%w: bad pattern %q: %w", ErrInvalidRule, p, err)
}

// matchMode says how generously a rule reads what is uncertain.
type matchMode struct {
	computed bool // a computed argument stands for whatever the rule needs
	// every requires a match under every reading of words that may be an
	// option's value or an operand.
	every bool
}

var (
	possibly  = matchMode{computed: true} // deny and ask rules: in doubt, match
	literally = matchMode{}               // did a match rely on computed words?
	surely    = matchMode{every: true}    // allow rules: only without doubt
)

func (r *rule) matchProgram(inv Invocation) bool {
	if r.full {
		return inv.path != "" && r.program.MatchString(inv.path)
	}
	return r.program.MatchString(inv.base)
}

func (r *rule) matchArgs(toks []token, m matchMode) bool {
	for _, o := range r.options {
		if !hasOption(toks, o, m) {
			return false
		}
	}
	return matchOperands(r.operands, toks, m)
}

// layer is one set of rules: the config's or the defaults.
type layer struct {
	rules  []*rule
	checks map[string]*rule // the most severe rule naming each check
}

func newLayer(cfg Config, user bool) (layer, error) {
	l := layer{checks: map[string]*rule{}}
	var patterns []*rule // after the rules naming a program plainly: those win ties
	for i, list := range [][]string{cfg.Deny, cfg.Ask, cfg.Allow} {
		d := []Decision{Deny, Ask, Allow}[i]
		for _, text := range list {
			r, err := parseRule(text, d)
			if err != nil {
				return layer{}, fmt.Errorf("%s rule %q: %w", d, text, err)
			}
			r.user = user
			switch old := l.checks[r.check]; {
			case r.check == "" && (r.full || r.glob):
				patterns = append(patterns, r)
			case r.check == "":
				l.rules = append(l.rules, r)
			case old == nil || r.decision.severity() > old.decision.severity():
				l.checks[r.check] = r
			}
		}
	}
	l.rules = append(l.rules, patterns...)
	return l, nil
}

// match returns the most severe rule that applies to a program, or nil:
// deny and ask rules when they may match, allow rules when they surely do.
func (l *layer) match(inv Invocation, toks []token) *rule {
	var best *rule
	for _, r := range l.rules {
		if best != nil && r.decision.severity() <= best.decision.severity() {
			continue
		}
		m := possibly
		if r.decision == Allow {
			m = surely
		}
		if r.matchProgram(inv) && r.matchArgs(toks, m) {
			best = r
		}
	}
	return best
}

// reason explains the rule's decision on a program.
func (r *rule) reason(inv Invocation, toks []token) string {
	subject := inv.source()
	if r.decision == Deny && len(r.options) == 0 && len(r.operands) == 0 {
		subject = inv.Name
	}
	desc := r.desc
	if desc == "" {
		desc = fmt.Sprintf("matches %s rule %q", map[bool]string{true: "your", false: "the"}[r.user], r.text)
	}
	if r.decision != Allow && !r.matchArgs(toks, literally) {
		desc += " (its arguments are only known at run time)"
	}
	return phrase(r.decision, subject, desc)
}

func phrase(d Decision, subject, detail string) string {
	verb := map[Decision]string{Deny: "is denied", Ask: "needs approval", Allow: "is allowed"}[d]
	return fmt.Sprintf("`%s` %s: %s", human.OneLine(subject, maxSubject), verb, detail)
}

const maxSubject = 80 // how much of a command a reason quotes

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
	return slices.ContainsFunc(toks, func(t token) bool {
		return t.kind == tokOption && optionMatches(opt, t.value, !m.every) || t.kind == tokComputed && m.computed && t.optLike
	})
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
// ones may stand for any number of operands; remembering each answer keeps
// that linear in their number.
func matchOperands(pats []*regexp.Regexp, toks []token, m matchMode) bool {
	memo := make([]int8, (len(pats)+1)*(len(toks)+1)) // 0 unknown, 1 match, -1 no match
	// match reports whether pats[p:] match the operands in toks[t:].
	var match func(p, t int) bool
	match = func(p, t int) bool {
		if p == len(pats) || t == len(toks) {
			return p == len(pats)
		}
		key := p*(len(toks)+1) + t
		if memo[key] != 0 {
			return memo[key] > 0
		}
		var ok bool
		switch tok := toks[t]; {
		case tok.kind == tokOption:
			ok = match(p, t+1)
		case tok.kind == tokComputed:
			// Surely, it could shift the operands: nothing after is certain.
			ok = m.computed || !m.every && match(p, t+1)
		case !tok.afterOption:
			ok = pats[p].MatchString(tok.value) && match(p+1, t+1)
		case m.every:
			ok = pats[p].MatchString(tok.value) && match(p+1, t+1) && match(p, t+1)
		default:
			ok = pats[p].MatchString(tok.value) && match(p+1, t+1) || match(p, t+1)
		}
		memo[key] = -1
		if ok {
			memo[key] = 1
		}
		return ok
	}
	return match(0, 0)
}
