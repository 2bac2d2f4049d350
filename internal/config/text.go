package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// quote writes s as a TOML basic string (TOML has no \x escapes).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
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
	b.WriteByte('"')
	return b.String()
}

// describe writes a decoded value as the file spells it, for errors;
// arrays are cut short.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return describeFloat(x)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return describeArray(x)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case nil:
		return "nothing"
	}
	return "a date or time"
}

func describeFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 0):
		return strings.Replace(strconv.FormatFloat(f, 'g', -1, 64), "Inf", "inf", 1)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") { // so that 30.0 does not read as 30
		s += ".0"
	}
	return s
}

func describeArray(a []any) string {
	const shown = 3
	parts := make([]string, 0, shown+1)
	for i, item := range a {
		if i == shown {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, describe(item))
	}
	s := "[" + strings.Join(parts, ", ") + "]"
	if utf8.RuneCountInString(s) > 60 {
		return "an array"
	}
	return s
}
