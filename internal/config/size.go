package config

import (
	"math"
	"strconv"
	"strings"
)

// sizeValue is a number of bytes: "512KB", "20MB", "1GB" or plain.
type sizeValue struct{ p *int64 }

const wantSize = `a size like "20MB"`

// unitBytes are the size suffixes, binary as courier's limits are.
var unitBytes = map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}

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
func formatSize(n int64) (text string, unit bool) {
	for i, name := range []string{"GB", "MB", "KB"} {
		if b := int64(1) << (30 - 10*i); n > 0 && n%b == 0 {
			return strconv.FormatInt(n/b, 10) + name, true
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
