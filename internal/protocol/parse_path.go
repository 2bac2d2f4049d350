package protocol

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on paths, as common file systems have them.
const (
	maxPathBytes = 4096
	maxNameBytes = 255
)

// checkPath finds what makes a path unusable before it reaches the file
// system; whether it stays inside the workspace is checked elsewhere.
func checkPath(p string) string {
	if plainPath(p) {
		return ""
	}
	if strings.TrimSpace(p) == "" {
		return `has an empty path; write path="relative/path/of/the/file"`
	}
	if len(p) > maxPathBytes {
		return fmt.Sprintf("has a path of %d bytes; paths may have at most %d", len(p), maxPathBytes)
	}
	if !utf8.ValidString(p) {
		return fmt.Sprintf("has a path that is not valid UTF-8 (%s)", show(p))
	}
	for _, r := range p {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Sprintf("has a control character in its path %s", show(p))
		}
	}
	for rest := p; rest != ""; {
		i := strings.IndexAny(rest, `/\`)
		name := rest
		if i >= 0 {
			name, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if len(name) > maxNameBytes {
			return fmt.Sprintf("has a path component of %d bytes (%s); names may have at most %d", len(name), show(name), maxNameBytes)
		}
	}
	return ""
}

// plainPath reports, in one pass, a path of printable ASCII that
// checkPath has nothing against; it is false for anything else, which
// checkPath then looks at closely.
func plainPath(p string) bool {
	if len(p) > maxPathBytes {
		return false
	}
	name, shown := 0, false // where the current name starts; a non-space seen
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c < ' ' || c >= 0x7f:
			return false
		case c == '/' || c == '\\':
			if i-name > maxNameBytes {
				return false
			}
			name, shown = i+1, true
		case c != ' ':
			shown = true
		}
	}
	return shown && len(p)-name <= maxNameBytes
}
