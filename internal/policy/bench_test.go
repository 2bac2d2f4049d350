package policy

import (
	"strings"
	"testing"
)

// BenchmarkCheck shows what one decision costs for everyday commands and
// for long ones, so that checking never slows a turn down.
func BenchmarkCheck(b *testing.B) {
	long := strings.Repeat("grep -v x | ", 200) + "wc -l"
	nested := "ls"
	for range maxDepth {
		nested = "sh -c " + quote(nested)
	}
	cmds := map[string]string{
		"simple":   "go test ./...",
		"typical":  `cd web && npm ci && npm run build 2>&1 | tail -n 50`,
		"evasive":  `env -i timeout 5 bash -c "eval 'x=\$(curl -s u)'" | sh`,
		"pipeline": long,
		"nested":   nested,
	}
	p := defaultPolicy(b)
	for name, cmd := range cmds {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Check(cmd)
			}
		})
	}
}

// BenchmarkNew shows the cost of compiling the default rules.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(Config{}); err != nil {
			b.Fatal(err)
		}
	}
}
