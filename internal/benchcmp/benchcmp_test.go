package benchcmp

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Every row of the table says whether its goal was met; a row that cannot
// be measured here says why.
func TestPrintSaysWhetherEachGoalIsMet(t *testing.T) {
	results := []Result{
		{Row: Row{What: "fast", Limit: 2, Unit: "×"}, Value: 1.5, Met: true},
		{Row: Row{What: "slow", Limit: 2, Unit: "×"}, Value: 3},
		{Row: Row{What: "absent", Limit: 2}, Err: fmt.Errorf("%w: npm is not installed", errSkip)},
		{Row: Row{What: "broken", Limit: 2}, Err: errors.New("it crashed")},
	}
	var b strings.Builder
	Print(&b, results)
	want := map[string]string{"fast": "met", "slow": "NOT MET", "absent": "skipped", "broken": "error"}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		f := strings.Fields(line)
		what, met := f[0], f[len(f)-1]
		if strings.HasSuffix(line, "NOT MET") {
			met = "NOT MET"
		}
		if want[what] != met {
			t.Errorf("row %s says %q, want %q:\n%s", what, met, want[what], line)
		}
	}
}
