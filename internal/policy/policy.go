package policy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/courier-agent/courier/internal/human"
)

// Decision is what the policy says about a command.
type Decision string

// The decisions, from least to most severe.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask" // run only with the person's approval
	Deny  Decision = "deny"
)

func (d Decision) severity() int { return slices.Index([]Decision{Allow, Ask, Deny}, d) }

// Verdict is the policy's answer for one command.
type Verdict struct {
	Decision Decision `json:"decision"`
	// Reason names the programs and rules, e.g. "`sudo` is denied: ...".
	Reason string `json:"reason"`
	// Rule is the rules behind the decision, sorted and joined with ", "
	// ("git push, rm -r"), a stable key to approve later commands by.
	Rule  string   `json:"-"`
	Rules []string `json:"-"`
	// Programs lists every program the command would start, in order,
	// leaving out the shell functions it defines.
	Programs []string `json:"-"`
	// Shape is what the command adds around the programs, as written and
	// sorted: assignments (also a loop's variable and WithEnv's), wrappers
	// with their options, git's options before its subcommand, and
	// redirections that write. Any of them can change what a program does,
	// so approving "all like it" covers only commands of the same shape.
	Shape []string `json:"-"`
}

// ApprovalKeys are what approving an Ask verdict "for all like it"
// records: each of its Rules followed by its Shape, one by one, so that a
// command doing part of the same things in the same shape is covered too.
func (v Verdict) ApprovalKeys() []string { return v.keys(v.Rules) }

func (v Verdict) keys(rules []string) []string {
	if len(v.Shape) == 0 {
		return rules
	}
	suffix := " with"
	for _, s := range v.Shape {
		suffix += " " + strconv.Quote(s)
	}
	keys := make([]string, len(rules))
	for i, r := range rules {
		keys[i] = r + suffix
	}
	return keys
}

// Covers says in words what approving an Ask verdict "for all like it"
// covers (see ApprovalKeys), for the person deciding.
func (v Verdict) Covers() string {
	rules := make([]string, len(v.Rules))
	for i, r := range v.Rules {
		rules[i] = ruleWords(r)
	}
	s := "later commands that need approval only for " + strings.Join(rules, ", ")
	if len(v.Shape) == 0 {
		return s + ", written with no variables, wrappers, git options or redirections that write"
	}
	shape := make([]string, len(v.Shape))
	for i, x := range v.Shape {
		shape[i] = "`" + human.OneLine(x, maxSubject) + "`"
	}
	return s + ", written with nothing more around their programs than " + strings.Join(shape, ", ")
}

// ruleWords names a rule for the person: a built-in check by what it
// notices, the person's own rules as written.
func ruleWords(key string) string {
	check, rest, _ := strings.Cut(key, " ")
	words, ok := map[string]string{
		checkGitWrite: "writing .git", checkRunsCode: "running code", checkDownload: "running downloaded files",
		checkDynamic: "programs named at run time", checkDevice: "using devices", checkDeviceWrite: "writing devices",
		checkUnparseable: "commands courier cannot read",
	}[check]
	switch {
	case !ok:
		return "`" + key + "`"
	case rest != "" && check == checkGitWrite:
		return words + " with `git " + rest + "`"
	case rest != "":
		return words + " with `" + rest + "`"
	}
	return words
}

// CoveredBy reports whether an Ask verdict is covered by approvals "for
// all like it": the key of its whole Rule, or every one of its
// ApprovalKeys, is in approved.
func (v Verdict) CoveredBy(approved []string) bool {
	if v.Decision != Ask || len(v.Rules) == 0 {
		return false
	}
	return slices.Contains(approved, v.keys([]string{v.Rule})[0]) ||
		!slices.ContainsFunc(v.ApprovalKeys(), func(k string) bool { return !slices.Contains(approved, k) })
}

// ReasonAfter is the reason to ask about a verdict approved does not
// cover, naming what it adds to the shapes approved under its rules.
func (v Verdict) ReasonAfter(approved []string) string {
	var shapes []string // the shapes approved under one of its rules
	for _, a := range approved {
		for _, r := range v.Rules {
			if rest, ok := strings.CutPrefix(a, r+" with"); ok && (rest == "" || rest[0] == ' ') {
				shapes = append(shapes, rest+" ")
			} else if a == r {
				shapes = append(shapes, " ")
			}
		}
	}
	if len(shapes) == 0 {
		return v.Reason
	}
	var added []string
	for _, s := range v.Shape {
		q := " " + strconv.Quote(s) + " "
		if !slices.ContainsFunc(shapes, func(x string) bool { return strings.Contains(x, q) }) {
			added = append(added, "`"+human.OneLine(s, maxSubject)+"`")
		}
	}
	if len(added) == 0 {
		return v.Reason
	}
	if n := len(added) - maxAdded; n > 0 {
		added = append(added[:maxAdded], fmt.Sprintf("%d more", n))
	}
	return v.Reason + "; the approval of all like it does not cover what it adds: " + strings.Join(added, ", ")
}

const maxAdded = 8 // additions a reason names

// WithEnv adds variables given besides the command's text (a JSON shell
// operation's env) to its Shape.
func (v Verdict) WithEnv(env map[string]string) Verdict {
	if len(env) > 0 {
		v.Shape = slices.Concat(v.Shape, Assignments(env))
		slices.Sort(v.Shape)
	}
	return v
}

// Assignments writes variables as NAME=value, quoted as needed, sorted.
func Assignments(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		q, err := syntax.Quote(env[k], syntax.LangBash)
		if err != nil {
			q = strconv.Quote(env[k])
		}
		out = append(out, k+"="+q)
	}
	return out
}

// Policy decides on shell commands; it is safe for concurrent use.
type Policy struct{ layers []layer } // the config's rules, then the defaults

// New compiles a config's rules, layered over the defaults unless
// cfg.NoDefaults; it reports the first rule whose syntax is wrong.
func New(cfg Config) (*Policy, error) {
	user, err := newLayer(cfg, true)
	if err != nil {
		return nil, err
	}
	p := &Policy{layers: []layer{user}}
	if !cfg.NoDefaults {
		def, err := newLayer(Default(), false)
		if err != nil {
			return nil, fmt.Errorf("built-in rules: %w", err)
		}
		p.layers = append(p.layers, def)
	}
	return p, nil
}

// Check decides on one command text.
func (p *Policy) Check(command string) Verdict {
	an := analyze(command)
	var outs []outcome
	var progs []string
	for _, inv := range an.invs {
		o := p.judge(inv)
		outs = append(outs, o)
		if !o.user {
			for _, f := range inv.notes {
				outs = append(outs, p.judgeFinding(f))
			}
		}
		if !inv.Function {
			progs = append(progs, inv.Name)
		}
	}
	for _, f := range an.findings {
		outs = append(outs, p.judgeFinding(f))
	}
	v := verdict(outs)
	v.Programs = progs
	slices.Sort(an.shape)
	v.Shape = slices.Compact(an.shape)
	return v
}

// outcome is the decision on one program or finding.
type outcome struct {
	decision Decision
	key      string
	reason   string
	user     bool // decided by one of the person's rules
}

func (p *Policy) judge(inv Invocation) outcome {
	if inv.Dynamic {
		return p.judgeFinding(finding{check: checkDynamic, subject: inv.source(), detail: "program name is computed at run time"})
	}
	toks := tokens(inv.words[1:])
	for _, l := range p.layers {
		if r := l.match(inv, toks); r != nil {
			return outcome{decision: r.decision, key: r.text, reason: r.reason(inv, toks), user: r.user}
		}
	}
	return outcome{decision: Allow}
}

func (p *Policy) judgeFinding(f finding) outcome {
	for _, l := range p.layers {
		if r := l.checks[f.check]; r != nil {
			key := f.key
			if key == "" || r.decision != Ask {
				key = f.check
			}
			return outcome{decision: r.decision, key: key, reason: phrase(r.decision, f.subject, f.detail)}
		}
	}
	return outcome{decision: Allow}
}

// verdict combines the outcomes: the most severe decision wins, with all
// of its reasons and rules.
func verdict(outs []outcome) Verdict {
	v := Verdict{Decision: Allow}
	for _, o := range outs {
		if o.decision.severity() > v.Decision.severity() {
			v.Decision = o.decision
		}
	}
	var reasons []string
	for _, o := range outs {
		if o.decision != v.Decision || o.key == "" {
			continue
		}
		if !slices.Contains(reasons, o.reason) {
			reasons = append(reasons, o.reason)
		}
		if !slices.Contains(v.Rules, o.key) {
			v.Rules = append(v.Rules, o.key)
		}
	}
	slices.Sort(v.Rules)
	v.Rule = strings.Join(v.Rules, ", ")
	v.Reason = strings.Join(reasons, "; ")
	if v.Reason == "" {
		v.Reason = "nothing in it needs approval"
	}
	return v
}
