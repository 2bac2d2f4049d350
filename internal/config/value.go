package config

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/policy"
)

// The kinds of value a field's Go type does not tell (setting.how).
const (
	command = "command" // a program and its arguments, []string
	budget  = "budget"  // a token budget: false (0), true (HistoryOn) or a number, int
)

// field returns a pointer to the field of c that holds s, found by name:
// a key's parts without underscores, in any case ("agent.base_url" is
// Agent.BaseURL).
func (s setting) field(c *Config) any {
	v := reflect.ValueOf(c).Elem()
	for part := range strings.SplitSeq(s.key, ".") {
		name := strings.ReplaceAll(part, "_", "")
		v = v.FieldByNameFunc(func(f string) bool { return strings.EqualFold(f, name) })
	}
	return v.Addr().Interface()
}

// kind names the type of s's value, as help texts and flags show it.
func (s setting) kind() string {
	if s.how != "" {
		return s.how
	}
	return map[string]string{"*time.Duration": "duration", "*int": "int", "*bool": "bool", "*int64": "size",
		"*string": "string", "*[]string": "list"}[fmt.Sprintf("%T", s.field(&Config{}))]
}

// parse sets s's field of c from text as environment variables and flags
// give it, turned into the value courier.toml would hold.
func (s setting) parse(c *Config, text string) error {
	t := strings.TrimSpace(text)
	var v any = t
	switch kind := s.kind(); kind {
	case "int", budget, "bool":
		// The usual spellings of yes and no; "1" is one token, not true.
		yes, isBool := map[string]bool{"true": true, "yes": true, "on": true, "1": true, "false": false, "no": false, "off": false, "0": false}[strings.ToLower(t)]
		if n, err := strconv.ParseInt(t, 10, 64); err == nil && kind != "bool" {
			v = n
		} else if isBool && kind != "int" {
			v = yes
		}
	case "list":
		var items []any // "A, B," is A and B
		for item := range strings.SplitSeq(t, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
		v = items
	case command:
		v = []any(nil)
		if t != "" {
			words, err := agent.SplitCommand(t) // as a shell would, never run by one
			if err != nil {
				return err
			}
			v = anys(words)
		}
	}
	return s.set(c, v)
}

// set sets s's field of c from v, a value of courier.toml; on error it
// leaves the field unchanged and says what it wanted and got (the caller
// adds where).
func (s setting) set(c *Config, v any) error {
	str, isStr := v.(string)
	str = strings.TrimSpace(str)
	bad := func(want string) error { return fmt.Errorf("want %s, got %s", want, describe(v)) }
	switch p := s.field(c).(type) {
	case *time.Duration:
		d, err := time.ParseDuration(str)
		if !isStr || err != nil {
			return bad(`a duration like "45s"`)
		} else if d <= 0 {
			return bad("a duration above zero")
		}
		*p = d
	case *bool:
		b, ok := v.(bool)
		if !ok {
			return bad("true or false")
		}
		*p = b
	case *int64:
		n, ok := v.(int64)
		if isStr {
			n, ok = parseSize(str)
		}
		if !ok {
			return bad(`a size like "20MB"`)
		} else if n <= 0 {
			return bad("a size above zero")
		}
		*p = n
	case *int:
		want, noun := "a whole number", "a whole number"
		if s.how == budget {
			want, noun = "true, false or a number of tokens", "a number of tokens"
			if b, ok := v.(bool); ok {
				v = map[bool]int64{true: HistoryOn}[b]
			}
		}
		n, ok := v.(int64)
		if !ok || int64(int(n)) != n {
			return bad(want)
		} else if n < int64(s.min) {
			return bad(fmt.Sprintf("%s of at least %d", noun, s.min))
		}
		*p = int(n)
	case *string:
		if s.values != nil {
			str = strings.ToLower(str)
		}
		if !isStr || s.values != nil && !slices.Contains(s.values, str) {
			return bad(cmp.Or(s.oneOf(), "a string"))
		} else if s.check != nil && str != "" {
			if err := s.check(str); err != nil {
				return err
			}
		}
		*p = str
	case *[]string:
		// Empty strings only as arguments: a program may need one.
		arr, ok := v.([]any)
		var out []string
		for i, item := range arr {
			x, isStr := item.(string)
			if ok = isStr && (strings.TrimSpace(x) != "" || i > 0 && s.how == command); !ok {
				break
			}
			if s.check != nil {
				if err := s.check(x); err != nil {
					return err
				}
			}
			out = append(out, x)
		}
		if !ok && s.how == command {
			return bad(`a list of words like ["llm", "-m", "gpt-4o"]`)
		} else if !ok && s.check != nil {
			return bad(`a list of rules like ["git push"]`)
		} else if !ok {
			return bad(`a list of strings like ["AWS_PROFILE"]`)
		}
		*p = out
	}
	return nil
}

// show returns s's value in c as courier.toml holds it (see tomlText).
func (s setting) show(c *Config) any {
	switch p := s.field(c).(type) {
	case *time.Duration:
		return human.Duration(*p)
	case *int64:
		if t := formatSize(*p); strings.HasSuffix(t, "B") {
			return t
		}
	case *int:
		if s.how == budget && (*p == 0 || *p == HistoryOn) {
			return *p != 0
		}
	case *[]string:
		if *p == nil {
			return []string{}
		}
	}
	return reflect.ValueOf(s.field(c)).Elem().Interface()
}

// oneOf says which words a setting of a few allows; "" among them may be
// given but is not named.
func (s setting) oneOf() string {
	var q []string
	for _, a := range s.values {
		if a != "" {
			q = append(q, quote(a))
		}
	}
	if q == nil {
		return ""
	}
	return "one of " + strings.Join(q, ", ")
}

func anys(words []string) []any {
	out := make([]any, len(words))
	for i, w := range words {
		out[i] = w
	}
	return out
}

// unitBytes are the size suffixes, binary as courier's limits are.
var unitBytes = map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}

// parseSize reads a whole number with an optional unit.
func parseSize(text string) (int64, bool) {
	t := strings.ToLower(strings.TrimSpace(text))
	digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
	v, err := strconv.ParseInt(t[:digits], 10, 64)
	u, ok := unitBytes[strings.TrimSpace(t[digits:])]
	if err != nil || !ok || v > math.MaxInt64/u {
		return 0, false
	}
	return v * u, true
}

// formatSize writes n with the largest unit that divides it, if one does.
func formatSize(n int64) string {
	return strings.Replace(strings.TrimSuffix(human.ExactBytes(n), " bytes"), " ", "", 1)
}

func checkBaseURL(text string) error {
	if _, err := agent.NormalizeBaseURL(text); err != nil {
		return fmt.Errorf(`want an http or https URL like "http://localhost:11434/v1", got %s`, quote(text))
	}
	return nil
}

func checkEnvName(text string) error {
	if !agent.ValidEnvName(text) {
		return fmt.Errorf(`want a variable name like "OPENAI_API_KEY", got %s`, quote(text))
	}
	return nil
}

// rule checks each policy rule of one decision when it is set, so that a
// wrong rule is reported with its line.
func rule(decision string) func(string) error {
	return func(r string) error {
		cfg := policy.Config{NoDefaults: true}
		*map[string]*[]string{"deny": &cfg.Deny, "ask": &cfg.Ask, "allow": &cfg.Allow}[decision] = []string{r}
		_, err := policy.New(cfg)
		return err
	}
}

// tomlText writes a value of show as courier.toml would hold it.
func tomlText(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// quote writes s as a TOML basic string (TOML has no \x escapes).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r) // invalid UTF-8 becomes U+FFFD
		}
	}
	return b.String() + `"`
}

// describe writes a decoded value as the file spells it, for errors;
// arrays are cut short.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case float64:
		s := strings.ToLower(strconv.FormatFloat(x, 'g', -1, 64)) // nan, +inf as TOML spells them
		if !strings.ContainsAny(s, ".en") {                       // so that 30.0 does not read as 30
			s += ".0"
		}
		return s
	case []any:
		parts := make([]string, 0, 4)
		for i, item := range x {
			if i == 3 {
				parts = append(parts, "...")
				break
			}
			parts = append(parts, describe(item))
		}
		if s := "[" + strings.Join(parts, ", ") + "]"; len([]rune(s)) <= 60 {
			return s
		}
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case nil:
		return "nothing"
	case int64, bool:
		return fmt.Sprint(x)
	}
	return "a date or time"
}
