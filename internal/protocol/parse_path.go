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

// What a byte is to plainPath.
const (
	pathOther = iota // control characters, DEL and non-ASCII
	pathByte
	pathSpace
	pathSep
)

var pathBytes = func() (t [256]uint8) {
	for c := ' '; c < 0x7f; c++ {
		t[c] = pathByte
	}
	t[' '], t['/'], t['\\'] = pathSpace, pathSep, pathSep
	return t
}()

// plainPath reports, in one pass, a path of printable ASCII that
// checkPath has nothing against; it is false for anything else, which
// checkPath then looks at closely.
func plainPath(p string) bool {
	if len(p) > maxPathBytes {
		return false
	}
	name, spaces := 0, 0 // where the current name starts; spaces seen
	for i := 0; i < len(p); i++ {
		switch pathBytes[p[i]] {
		case pathByte:
		case pathSpace:
			spaces++
		case pathSep:
			if i-name > maxNameBytes {
				return false
			}
			name = i + 1
		default:
			return false
		}
	}
	return spaces < len(p) && len(p)-name <= maxNameBytes
}
