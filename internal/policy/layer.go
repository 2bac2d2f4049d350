package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/courier-agent/courier/internal/human"
)

// layer is one set of rules: the config's or the defaults.
type layer struct {
	rules  []*rule
	checks map[string]*rule // the most severe rule naming each check
}

func newLayer(cfg Config, user bool) (layer, error) {
	l := layer{checks: map[string]*rule{}}
	lists := []struct {
		name  string
		d     Decision
		rules []string
	}{{"deny", Deny, cfg.Deny}, {"ask", Ask, cfg.Ask}, {"allow", Allow, cfg.Allow}}
	for _, list := range lists {
		for _, text := range list.rules {
			r, err := parseRule(text, list.d)
			if err != nil {
				return layer{}, fmt.Errorf("%s rule %q: %w", list.name, text, err)
			}
			r.user = user
			if r.check == "" {
				l.rules = append(l.rules, r)
			} else if old := l.checks[r.check]; old == nil || r.decision.severity() > old.decision.severity() {
				l.checks[r.check] = r
			}
		}
	}
	// Rules naming a program plainly come first: they win ties.
	slices.SortStableFunc(l.rules, func(a, b *rule) int { return cmp.Compare(a.pattern(), b.pattern()) })
	return l, nil
}

func (r *rule) pattern() int {
	if r.full || r.program.re != nil {
		return 1
	}
	return 0
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
		desc = fmt.Sprintf("matches the rule %q", r.text)
		if r.user {
			desc = fmt.Sprintf("matches your rule %q", r.text)
		}
	}
	if r.decision != Allow && !r.matchArgs(toks, literally) {
		desc += " (its arguments are only known at run time)"
	}
	return phrase(r.decision, subject, desc)
}

func phrase(d Decision, subject, detail string) string {
	subject = human.OneLine(subject, maxSubject)
	switch d {
	case Deny:
		return fmt.Sprintf("`%s` is denied: %s", subject, detail)
	case Ask:
		return fmt.Sprintf("`%s` needs approval: %s", subject, detail)
	}
	return fmt.Sprintf("`%s` is allowed: %s", subject, detail)
}

const maxSubject = 80 // how much of a command a reason quotes
