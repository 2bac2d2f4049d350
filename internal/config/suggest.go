package config

import (
	"strings"

	"github.com/courier-agent/courier/internal/textdist"
)

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
		case nested && isTable(parent) && !sNested && s.key == name:
			return "; '" + name + "' goes above the [" + parent + "] table, as keys after a [table] line belong to it"
		case !nested && sNested && sName == name:
			return "; did you mean '" + name + "' in the [" + sParent + "] table?"
		}
	}
	best := textdist.Nearest(key, knownKeys())
	if best == "" {
		return ""
	}
	return "; did you mean '" + best + "'?"
}

// knownKeys lists the setting keys and the table names.
func knownKeys() []string {
	keys := make([]string, 0, len(settings)+2)
	for _, s := range settings {
		keys = append(keys, s.key)
	}
	return append(keys, tableNames()...)
}
