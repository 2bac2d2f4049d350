package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/human"
)

// value is a setting bound to its field of a Config. parse takes text as
// environment variables and flags give it, decode a value of courier.toml;
// both leave the field unchanged on error, and say what they wanted and
// got (the caller adds where).
type value interface {
	kind() string
	parse(text string) error
	decode(v any) error
	json() any // the value as courier.toml holds it (see tomlText)
}

func wantError(want, got string) error {
	return fmt.Errorf("want %s, got %s", want, got)
}

// decodeString decodes a string of courier.toml with parse.
func decodeString(v any, want string, parse func(string) error) error {
	s, ok := v.(string)
	if !ok {
		return wantError(want, describe(v))
	}
	return parse(s)
}

// tomlText writes a value's json() as courier.toml would hold it.
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

type durationValue struct{ p *time.Duration }

const wantDuration = `a duration like "45s"`

func (durationValue) kind() string { return "duration" }

func (d durationValue) parse(text string) error {
	v, err := time.ParseDuration(strings.TrimSpace(text))
	if err != nil {
		return wantError(wantDuration, quote(text))
	}
	if v <= 0 {
		return wantError("a duration above zero", quote(text))
	}
	*d.p = v
	return nil
}

func (d durationValue) decode(v any) error { return decodeString(v, wantDuration, d.parse) }
func (d durationValue) json() any          { return human.Duration(*d.p) }

// intValue is a whole number of at least min.
type intValue struct {
	p   *int
	min int
}

func (intValue) kind() string { return "int" }

func (n intValue) parse(text string) error {
	v, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		return wantError("a whole number", quote(text))
	}
	return n.decode(int64(v))
}

func (n intValue) decode(v any) error {
	i, ok := v.(int64)
	switch {
	case !ok || int64(int(i)) != i:
		return wantError("a whole number", describe(v))
	case i < int64(n.min):
		return wantError(fmt.Sprintf("a whole number of at least %d", n.min), describe(v))
	}
	*n.p = int(i)
	return nil
}

func (n intValue) json() any { return *n.p }

type boolValue struct{ p *bool }

func (boolValue) kind() string { return "bool" }

// parse accepts the usual spellings of yes and no.
func (b boolValue) parse(text string) error {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "true", "yes", "on", "1":
		*b.p = true
	case "false", "no", "off", "0":
		*b.p = false
	default:
		return wantError("true or false", quote(text))
	}
	return nil
}

func (b boolValue) decode(v any) error {
	x, ok := v.(bool)
	if !ok {
		return wantError("true or false", describe(v))
	}
	*b.p = x
	return nil
}

func (b boolValue) json() any { return *b.p }

// enumValue is one of a few words; "" among them may be given but is not
// named.
type enumValue struct {
	p       *string
	allowed []string
}

func (enumValue) kind() string { return "string" }

func (e enumValue) want() string {
	var q []string
	for _, a := range e.allowed {
		if a != "" {
			q = append(q, quote(a))
		}
	}
	return "one of " + strings.Join(q, ", ")
}

func (e enumValue) parse(text string) error {
	t := strings.ToLower(strings.TrimSpace(text))
	for _, a := range e.allowed {
		if t == a {
			*e.p = a
			return nil
		}
	}
	return wantError(e.want(), quote(text))
}

func (e enumValue) decode(v any) error { return decodeString(v, e.want(), e.parse) }
func (e enumValue) json() any          { return *e.p }
