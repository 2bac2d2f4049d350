package policy

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/pattern"
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
	program  matcher
	full     bool // the program has a "/": match the whole path
	options  []string
	operands []matcher
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
	if err := r.setProgram(fields[0]); err != nil {
		return nil, err
	}
	for _, f := range fields[1:] {
		if err := r.addWord(f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *rule) setProgram(p string) error {
	if strings.HasPrefix(p, "-") {
		return fmt.Errorf("%w: it starts with an option, not a program", ErrInvalidRule)
	}
	r.full = strings.Contains(p, "/")
	if r.full {
		p = path.Clean(p)
	}
	// On a case-insensitive file system SUDO runs sudo.
	m, err := compilePattern(p, true)
	if err != nil {
		return err
	}
	r.program = m
	return nil
}

func (r *rule) addWord(f string) error {
	if !strings.HasPrefix(f, "-") {
		m, err := compilePattern(f, false)
		if err != nil {
			return err
		}
		r.operands = append(r.operands, m)
		return nil
	}
	if f == "-" || f == "--" || strings.Contains(f, "=") {
		return fmt.Errorf("%w: %q is not an option a rule can match (write -x, -name or --name)", ErrInvalidRule, f)
	}
	r.options = append(r.options, f)
	return nil
}

// matcher matches a rule's shell pattern; plain names need no regexp.
type matcher struct {
	literal string
	fold    bool // ignore case
	re      *regexp.Regexp
}

func (m matcher) MatchString(s string) bool {
	switch {
	case m.re != nil:
		return m.re.MatchString(s)
	case m.fold:
		return strings.EqualFold(s, m.literal)
	}
	return s == m.literal
}

func compilePattern(p string, fold bool) (matcher, error) {
	if !pattern.HasMeta(p, 0) && !strings.Contains(p, `\`) {
		return matcher{literal: p, fold: fold}, nil
	}
	mode := pattern.EntireString
	if fold {
		mode |= pattern.NoGlobCase
	}
	expr, err := pattern.Regexp(p, mode)
	if err != nil {
		return matcher{}, fmt.Errorf("%w: bad pattern %q: %w", ErrInvalidRule, p, err)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return matcher{}, fmt.Errorf("%w: bad pattern %q: %w", ErrInvalidRule, p, err)
	}
	return matcher{re: re}, nil
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
