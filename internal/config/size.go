package config

import (
	"math"
	"strconv"
	"strings"
)

// sizeValue is a number of bytes: "512KB", "20MB", "1GB" (binary units,
// as courier's limits are) or plain.
type sizeValue struct{ p *int64 }

const wantSize = `a size like "20MB"`

// units are the size suffixes, largest first so that formatSize picks the
// largest exact one.
var units = []struct {
	names []string
	bytes int64
}{
	{[]string{"gb", "gib", "g"}, 1 << 30},
	{[]string{"mb", "mib", "m"}, 1 << 20},
	{[]string{"kb", "kib", "k"}, 1 << 10},
	{[]string{"b", ""}, 1},
}

func (sizeValue) kind() string { return "size" }

func (z sizeValue) parse(text string) error {
	n, ok := parseSize(text)
	if !ok {
		return wantError(wantSize, quote(text))
	}
	return z.set(n, quote(text))
}

func (z sizeValue) decode(v any) error {
	switch x := v.(type) {
	case string:
		return z.parse(x)
	case int64:
		return z.set(x, strconv.FormatInt(x, 10))
	}
	return wantError(wantSize, describe(v))
}

func (z sizeValue) set(n int64, got string) error {
	if n <= 0 {
		return wantError("a size above zero", got)
	}
	*z.p = n
	return nil
}

// parseSize reads a whole number with an optional unit.
func parseSize(text string) (n int64, ok bool) {
	t := strings.ToLower(strings.TrimSpace(text))
	digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
	num, unit := t[:digits], strings.TrimSpace(t[digits:])
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, false
	}
	for _, u := range units {
		for _, name := range u.names {
			if unit == name {
				if v > math.MaxInt64/u.bytes {
					return 0, false
				}
				return v * u.bytes, true
			}
		}
	}
	return 0, false
}

// formatSize writes n with the largest unit that divides it, if one does.
func formatSize(n int64) (text string, unit bool) {
	for _, u := range units[:len(units)-1] {
		if n > 0 && n%u.bytes == 0 {
			return strconv.FormatInt(n/u.bytes, 10) + strings.ToUpper(u.names[0]), true
		}
	}
	return strconv.FormatInt(n, 10), false
}

func sizeText(n int64) string {
	s, _ := formatSize(n)
	return s
}

func (z sizeValue) json() any {
	if s, unit := formatSize(*z.p); unit {
		return s
	}
	return *z.p
}
