package config

import "strings"

// suggestion completes an unknown-setting error: a known key spelled
// nearly like key, or the right place for a key written in the wrong
// table, the commonest slip in TOML, where every key after a [table] line
// belongs to that table.
func suggestion(key string) string {
	parent, name, nested := strings.Cut(key, ".")
	if !nested {
		name = key
	}
	for _, s := range settings {
		sParent, sName, sNested := strings.Cut(s.key, ".")
		switch {
		case nested && parent == policyTable && !sNested && s.key == name:
			return "; '" + name + "' goes above the [policy] table, as keys after a [table] line belong to it"
		case !nested && sNested && sName == name:
			return "; did you mean '" + name + "' in the [" + sParent + "] table?"
		}
	}
	best, bestDist := "", 0
	for _, known := range knownKeys() {
		// Allow a slip of about one character in three.
		d := distance(key, known)
		if d <= max(1, len(known)/3) && (best == "" || d < bestDist) {
			best, bestDist = known, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean '" + best + "'?"
}

// knownKeys lists the setting keys and the table name.
func knownKeys() []string {
	keys := make([]string, 0, len(settings)+1)
	for _, s := range settings {
		keys = append(keys, s.key)
	}
	return append(keys, policyTable)
}

// distance is the Levenshtein distance between a and b, counted in bytes
// as keys are ASCII.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
