package protocol

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

// attrs are a tag's well-formed attributes; tags have few, so a slice
// beats a map.
type attrs []attr

// get returns the value of the attribute named k.
func (m attrs) get(k string) (string, bool) {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].key == k {
			return m[i].val, true
		}
	}
	return "", false
}

// maxAttrs bounds the attributes of one tag; no command needs more.
const maxAttrs = 16

// tagAttrs collects t's attributes; a name given twice, too many names, or
// words without a value, are problems. Malformed values are left out.
func tagAttrs(t *tagLine) (attrs, string) {
	problem := t.problem
	if len(t.attrs) > maxAttrs && problem == "" {
		problem = fmt.Sprintf("has %d attributes; no command takes more than a few", len(t.attrs))
	}
	for i, a := range t.attrs[:min(len(t.attrs), maxAttrs)] {
		if _, twice := attrs(t.attrs[:i]).get(a.key); twice && problem == "" {
			problem = "the attribute " + a.key + " is given twice"
		}
	}
	bad := func(a attr) bool { return a.bad }
	m := attrs(t.attrs)
	if slices.ContainsFunc(m, bad) {
		m = slices.DeleteFunc(slices.Clone(m), bad)
	}
	if len(t.bare) > 0 && problem == "" {
		if _, hasPath := m.get("path"); !hasPath && t.typ != command.RunCommand && t.typ != command.Message && t.typ != command.Done {
			problem = "has no path attribute; write it as path=" + show(t.bare[0])
		} else {
			problem = fmt.Sprintf("has %s in the tag, which is not an attribute (write attributes as name=\"value\")", show(t.bare[0]))
		}
	}
	return m, problem
}

// tagPath reads and checks the path attribute.
func tagPath(m attrs) (string, string) {
	p, ok := m.get("path")
	if !ok {
		return "", `has no path attribute; write it as path="relative/path"`
	}
	if problem := checkPath(p); problem != "" {
		return "", problem
	}
	return p, ""
}

// readRange reads READ_FILE's lines="120-180" ("120", "120-", "-180") or
// start_line/end_line. EndLine 0 means to the end of the file.
func readRange(m attrs) (start, end int, problem string) {
	if lines, ok := m.get("lines"); ok {
		v := strings.NewReplacer("–", "-", "—", "-", " ", "").Replace(lines)
		a, b, isRange := strings.Cut(v, "-")
		switch {
		case !isRange:
			start = lineNumber(a, false)
			end = start
		case a == "":
			start, end = 1, lineNumber(b, false)
		default:
			start = lineNumber(a, false)
			end = lineNumber(b, true)
		}
		if start < 0 || end < 0 {
			return 0, 0, fmt.Sprintf("has lines=%s; write lines=\"120-180\", lines=\"120\" or lines=\"120-\"", show(lines))
		}
	} else {
		var p string
		if start, end, p = lineAttrs(m, true); p != "" {
			return 0, 0, p
		}
	}
	if end != 0 && end < start {
		return 0, 0, fmt.Sprintf("asks for lines %d to %d, but the range ends before it starts", start, end)
	}
	return start, end, ""
}

// lineNumber reads a positive line number; -1 when it is not one. An empty
// string is 0 when empty is allowed.
func lineNumber(v string, empty bool) int {
	if v == "" && empty {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return -1
	}
	return n
}

// lineAttrs reads start_line and end_line. Both are needed unless
// openEnd allows start_line alone (READ_FILE to the end of the file).
func lineAttrs(m attrs, openEnd bool) (start, end int, problem string) {
	sv, hasStart := m.get("start_line")
	ev, hasEnd := m.get("end_line")
	if !hasStart && !hasEnd {
		return 0, 0, ""
	}
	if hasStart != hasEnd && !(openEnd && hasStart) {
		return 0, 0, "has only one of start_line and end_line; give both, as whole line numbers"
	}
	start = lineNumber(strings.TrimSpace(sv), false)
	end = lineNumber(strings.TrimSpace(ev), !hasEnd)
	if start < 0 || end < 0 {
		return 0, 0, fmt.Sprintf("has start_line=%s end_line=%s; line numbers are whole numbers from 1", show(sv), show(ev))
	}
	if end != 0 && end < start {
		return 0, 0, fmt.Sprintf("has end_line %d before start_line %d", end, start)
	}
	return start, end, ""
}

// noOverwrite reads overwrite="false" or no_overwrite="true".
func noOverwrite(m attrs) bool {
	if v, ok := m.get("overwrite"); ok {
		return isFalse(v)
	}
	if v, ok := m.get("no_overwrite"); ok {
		return !isFalse(v)
	}
	return false
}

func isFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "0", "off":
		return true
	}
	return false
}

// maxTimeoutSeconds keeps a timeout in seconds from overflowing a Duration.
const maxTimeoutSeconds = 1 << 32

// timeoutAttr reads timeout="60s" (a Go duration) or timeout="60" (seconds).
func timeoutAttr(m attrs) (command.Duration, string) {
	v, ok := m.get("timeout")
	if !ok {
		return 0, ""
	}
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, fmt.Sprintf("has timeout=%s; write seconds (timeout=\"60\") or a duration (timeout=\"2m\")", show(v))
		}
		if n > maxTimeoutSeconds {
			return 0, fmt.Sprintf("has timeout=%s, which is too long", show(v))
		}
		d = time.Duration(n) * time.Second
	}
	if d <= 0 {
		return 0, fmt.Sprintf("has timeout=%s; the timeout must be positive", show(v))
	}
	return command.Duration(d), ""
}
