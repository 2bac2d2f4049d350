package config

import (
	"strings"

	"github.com/courier-agent/courier/internal/policy"
)

// listValue is a list of strings: a TOML array, or comma-separated.
type listValue struct{ p *[]string }

const wantList = `a list of strings like ["AWS_PROFILE"]`

func (listValue) kind() string { return "list" }

// parse splits at commas; empty items are dropped so that "A, B," works.
func (l listValue) parse(text string) error {
	var out []string
	for item := range strings.SplitSeq(text, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	*l.p = out
	return nil
}

func (l listValue) decode(v any) error {
	out, err := decodeStrings(v, wantList, false)
	if err != nil {
		return err
	}
	*l.p = out
	return nil
}

// decodeStrings accepts a TOML array of strings, empty ones only after the
// first and with emptyArgs (a program may need an empty argument).
func decodeStrings(v any, want string, emptyArgs bool) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, wantError(want, describe(v))
	}
	out := make([]string, 0, len(arr))
	for i, item := range arr {
		s, ok := item.(string)
		if !ok || (strings.TrimSpace(s) == "" && (i == 0 || !emptyArgs)) {
			return nil, wantError(want, describe(v))
		}
		out = append(out, s)
	}
	return out, nil
}

func (l listValue) json() any {
	if *l.p == nil {
		return []string{}
	}
	return *l.p
}

// ruleList is a list of policy rules of one decision, each checked when
// set, so that a wrong rule is reported with its line.
type ruleList struct {
	p        *[]string
	decision string
}

func (ruleList) kind() string { return "list" }

func (r ruleList) parse(text string) error {
	var rules []string
	if err := (listValue{&rules}).parse(text); err != nil {
		return err
	}
	return r.set(rules)
}

func (r ruleList) decode(v any) error {
	rules, err := decodeStrings(v, `a list of rules like ["git push"]`, false)
	if err != nil {
		return err
	}
	return r.set(rules)
}

func (r ruleList) set(rules []string) error {
	for _, rule := range rules {
		if err := checkRule(r.decision, rule); err != nil {
			return err
		}
	}
	*r.p = rules
	return nil
}

func checkRule(decision, rule string) error {
	cfg := policy.Config{NoDefaults: true}
	*map[string]*[]string{"deny": &cfg.Deny, "ask": &cfg.Ask, "allow": &cfg.Allow}[decision] = []string{rule}
	_, err := policy.New(cfg)
	return err
}

func (r ruleList) json() any { return listValue{r.p}.json() }
