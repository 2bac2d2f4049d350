package config

import "fmt"

// Bounds on a settings file, far above what any courier.toml needs: the
// TOML parser's time grows much faster than the file on deeply dotted or
// nested keys (20,000 dotted parts took minutes).
const (
	maxFileSize = 1 << 20 // bytes
	maxKeyParts = 8       // parts of one dotted key or table name
	maxNesting  = 16      // arrays and inline tables inside each other
	maxKeys     = 1000    // keys and table headers
	maxItems    = 10000   // items of all arrays and inline tables together
)

// checkShape refuses a settings file beyond the bounds, naming the line
// and the bound, in one pass over the text. It knows just enough TOML to
// tell keys from values: strings, comments, table headers, arrays and
// inline tables.
func checkShape(name, data string) error {
	line, parts, keys, items := 1, 0, 0, 0
	var stack []byte             // open '[' and '{'
	atKey, header := true, false // at a line's start, or after '{' or ',' in an inline table; in a [table] line
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s; a settings file may have at most %d dotted parts per key, %d levels of nesting, %d keys and %d items in lists",
			FileSource(name, line), fmt.Sprintf(format, args...), maxKeyParts, maxNesting, maxKeys, maxItems)
	}
	lineStart := true
	for i := 0; i < len(data); i++ {
		c, start := data[i], lineStart
		lineStart = false
		switch {
		case c == '\n':
			line++
			if len(stack) == 0 {
				atKey, header, parts = true, false, 0
			}
			lineStart = true
		case c == ' ' || c == '\t' || c == '\r':
			lineStart = start
		case c == '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			i, line = skipString(data, i, line)
		case start && c == '[' && len(stack) == 0:
			header, atKey, parts = true, true, 0
			if i+1 < len(data) && data[i+1] == '[' {
				i++
			}
		case atKey && c == '.':
			if parts++; parts+1 > maxKeyParts {
				return fail("a key of more than %d dotted parts", maxKeyParts)
			}
		case atKey && (c == '=' || header && c == ']'):
			if header && i+1 < len(data) && data[i+1] == ']' {
				i++
			}
			// After a header the rest of the line is a comment or nothing.
			if atKey, header, parts, keys = false, false, 0, keys+1; keys > maxKeys {
				return fail("more than %d keys", maxKeys)
			}
		case c == '[' || c == '{':
			if stack = append(stack, c); len(stack) > maxNesting {
				return fail("values nested more than %d deep", maxNesting)
			}
			if c == '{' {
				atKey, parts = true, 0
			}
		case (c == ']' || c == '}') && len(stack) > 0:
			stack = stack[:len(stack)-1]
		case c == ',' && len(stack) > 0:
			if items++; items > maxItems {
				return fail("more than %d items in lists", maxItems)
			}
			if stack[len(stack)-1] == '{' {
				atKey, parts = true, 0
			}
		}
	}
	return nil
}

// skipString returns the index of the last byte of the string quoted at
// data[i], and the line it ends on.
func skipString(data string, i, line int) (int, int) {
	q := data[i]
	triple := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	if triple {
		i += 2
	}
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '\\' && q == '"':
			i++
		case c == '\n' && !triple:
			return i - 1, line // an unclosed string; the parser reports it
		case c == '\n':
			line++
		case c == q && !triple:
			return i, line
		case c == q && i+2 < len(data) && data[i+1] == q && data[i+2] == q:
			i += 2
			// Up to two more quotes belong to the string.
			for n := 0; n < 2 && i+1 < len(data) && data[i+1] == q; n++ {
				i++
			}
			return i, line
		}
	}
	return i, line
}
