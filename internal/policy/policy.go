package policy

import (
	"fmt"
	"slices"
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
}

// CoveredBy reports whether an Ask verdict is covered by approvals the
// person gave "for all like it": either its whole Rule key, or every one
// of its Rules, is in approved. Storing a verdict's Rules one by one thus
// also approves commands that do only part of the same things. Allow and
// Deny verdicts are never covered: approval does not apply to them.
func (v Verdict) CoveredBy(approved []string) bool {
	if v.Decision != Ask || len(v.Rules) == 0 {
		return false
	}
	if slices.Contains(approved, v.Rule) {
		return true
	}
	for _, r := range v.Rules {
		if !slices.Contains(approved, r) {
			return false
		}
	}
	return true
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
