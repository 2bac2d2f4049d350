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

// severity orders decisions so that the most severe one wins.
func (d Decision) severity() int {
	switch d {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// Verdict is the policy's answer for one command.
type Verdict struct {
	Decision Decision `json:"decision"`
	// Reason names the program and the rule, e.g. "`sudo` is denied:
	// privilege escalation is never run by courier".
	Reason string `json:"reason"`
	// Rule is the stable key of what decided: the rules behind the
	// decision, sorted and joined with ", ", e.g. "git push, rm -r". An
	// engine can store it to approve later commands with the same key.
	Rule string `json:"-"`
	// Rules are the same rules one by one; see CoveredBy.
	Rules []string `json:"-"`
	// Programs lists every program the command would start, in the order
	// they appear; shell functions the command defines are left out.
	Programs []string `json:"-"`
	// Shape is what the command adds around the programs the rules judge,
	// as written, sorted: variable assignments (A=1 cmd, export A=1, a
	// loop's variable, and the variables WithEnv adds), wrappers with
	// their options (env A=1, timeout 5, sh -c '...', xargs, find -exec,
	// eval, source), git's options before its subcommand (git -c k=v,
	// git -C dir), and redirections that write (> file). Any of them can
	// change what a program does, so an approval "for all like it" covers
	// only commands of the same shape (see ApprovalKeys).
	Shape []string `json:"-"`
}

// ApprovalKeys are what approving an Ask verdict "for all like it"
// records: each of its Rules, followed by its Shape when it has one.
// Storing them one by one also approves commands that do only part of
// the same things, in the same shape.
func (v Verdict) ApprovalKeys() []string { return v.keys(v.Rules) }

func (v Verdict) keys(rules []string) []string {
	if len(v.Shape) == 0 {
		return rules
	}
	var suffix strings.Builder
	suffix.WriteString(" with")
	for _, s := range v.Shape {
		suffix.WriteString(" " + strconv.Quote(s))
	}
	keys := make([]string, len(rules))
	for i, r := range rules {
		keys[i] = r + suffix.String()
	}
	return keys
}

// CoveredBy reports whether an Ask verdict is covered by approvals the
// person gave "for all like it": either the key of its whole Rule, or
// every one of its ApprovalKeys, is in approved. Allow and Deny verdicts
// are never covered: approval does not apply to them.
func (v Verdict) CoveredBy(approved []string) bool {
	if v.Decision != Ask || len(v.Rules) == 0 {
		return false
	}
	if slices.Contains(approved, v.keys([]string{v.Rule})[0]) {
		return true
	}
	for _, k := range v.ApprovalKeys() {
		if !slices.Contains(approved, k) {
			return false
		}
	}
	return true
}

// ReasonAfter is the reason to ask about a verdict that approved does not
// cover, saying what the command adds to the shape of commands approved
// "for all like it" under its rules.
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

// maxAdded bounds how many additions a reason names.
const maxAdded = 8

// WithEnv returns the verdict for a command given the variables env
// besides its text (a JSON shell operation's env): they join its Shape.
func (v Verdict) WithEnv(env map[string]string) Verdict {
	if len(env) > 0 {
		v.Shape = slices.Concat(v.Shape, Assignments(env))
		slices.Sort(v.Shape)
	}
	return v
}

// Assignments writes variables as shell assignments, NAME=value with the
// value quoted where it needs to be, sorted by name.
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

// Policy decides on shell commands. It is built once by New and is safe
// for concurrent use.
type Policy struct {
	layers []layer // the config's rules, then the defaults
}

// New compiles a policy from a config, layered over the defaults unless
// cfg.NoDefaults is set. It reports the first rule whose syntax is wrong.
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
	outs := make([]outcome, 0, len(an.invs)+len(an.findings))
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

// judge decides on one program.
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

// judgeFinding decides on something a built-in check noticed.
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

// verdict combines the outcomes: the most severe decision wins, and its
// reasons and rules are all kept.
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
	v.Rule = joinRules(v.Rules)
	v.Reason = joinReasons(reasons)
	if v.Reason == "" {
		v.Reason = "nothing in it needs approval"
	}
	return v
}
