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
	for name := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if len(name) > maxNameBytes {
			return fmt.Sprintf("has a path component of %d bytes (%s); names may have at most %d", len(name), show(name), maxNameBytes)
		}
	}
	return ""
}
