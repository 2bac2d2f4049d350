package policy

import (
	"fmt"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// layer is one set of rules: the config's or the defaults.
type layer struct {
	byName  map[string][]*rule // rules for one literal program name
	globbed []*rule            // rules whose program is a pattern or a path
	checks  map[string]*rule   // the most severe rule naming each check
}

func newLayer(cfg Config, user bool) (layer, error) {
	l := layer{byName: map[string][]*rule{}, checks: map[string]*rule{}}
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
			l.add(r)
		}
	}
	return l, nil
}

func (l *layer) add(r *rule) {
	switch {
	case r.check != "":
		if old := l.checks[r.check]; old == nil || r.decision.severity() > old.decision.severity() {
			l.checks[r.check] = r
		}
	case r.literal != "":
		l.byName[r.literal] = append(l.byName[r.literal], r)
	default:
		l.globbed = append(l.globbed, r)
	}
}

// match returns the most severe rule that applies to a program, or nil:
// deny and ask rules when they may match, allow rules when they surely do.
func (l *layer) match(inv Invocation, toks []token) *rule {
	var best *rule
	consider := func(rules []*rule) {
		for _, r := range rules {
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
	}
	consider(l.byName[strings.ToLower(inv.base)])
	consider(l.globbed)
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
