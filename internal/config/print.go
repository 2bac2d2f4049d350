package config

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// row is one setting as Print and JSON show it.
type row struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source Source `json:"source"`
	text   string // Value as courier.toml holds it
}

func (c *Config) rows() []row {
	out := make([]row, 0, len(settings))
	for _, s := range settings {
		v := s.show(c)
		out = append(out, row{Key: s.key, Value: v, Source: c.Source(s.key), text: tomlText(v)})
	}
	return out
}

// Print writes every setting as "key = value  # source", aligned, table
// by table: valid TOML, to start a courier.toml with.
func (c *Config) Print(w io.Writer) error {
	var top []row
	tables := map[string][]row{}
	for _, r := range c.rows() {
		if table, k, ok := strings.Cut(r.Key, "."); ok {
			r.Key = k
			tables[table] = append(tables[table], r)
		} else {
			top = append(top, r)
		}
	}
	var b strings.Builder
	writeRows(&b, top)
	for _, table := range tableNames {
		b.WriteString("\n[" + table + "]\n")
		writeRows(&b, tables[table])
		if table == "policy" && c.Policy.NoDefaults {
			b.WriteString("# courier's built-in rules are off (no_defaults)\n")
		} else if table == "policy" {
			b.WriteString("# courier's built-in rules apply after these\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// valueColumn caps the width values are padded to, so that one long list
// does not push every comment far right.
const valueColumn = 24

func writeRows(b *strings.Builder, rows []row) {
	keyW, valW := 0, 0
	for _, r := range rows {
		keyW = max(keyW, len(r.Key))
		if len(r.text) <= valueColumn {
			valW = max(valW, len(r.text))
		}
	}
	for _, r := range rows {
		fmt.Fprintf(b, "%-*s = %-*s  # %s\n", keyW, r.Key, valW, r.text, r.Source)
	}
}

// JSON returns every setting as [{"key", "value", "source"}] in display
// order, values as courier.toml holds them ("30s", "20MB").
func (c *Config) JSON() ([]byte, error) {
	out, err := json.Marshal(c.rows())
	if err != nil {
		return nil, fmt.Errorf("settings as json: %w", err)
	}
	return out, nil
}
