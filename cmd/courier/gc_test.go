package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// courier's collector settings apply when GOGC and GOMEMLIMIT are unset,
// and give way to them when set, as the README says.
func TestTuneGC(t *testing.T) {
	percent := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	p0, l0 := percent(), debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(p0)
		debug.SetMemoryLimit(l0)
	})
	for _, c := range []struct {
		gogc, memlimit string
		percent        int
		limit          int64
	}{
		{"", "", 400, gcSoftLimit},
		{"100", "", 100, gcSoftLimit},
		{"", "1GiB", 400, math.MaxInt64},
		{"100", "1GiB", 100, math.MaxInt64},
	} {
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", c.memlimit)
		// As the runtime leaves them when neither variable is set.
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		tuneGC()
		if p, l := percent(), debug.SetMemoryLimit(-1); p != c.percent || l != c.limit {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: percent %d, limit %d; want %d, %d", c.gogc, c.memlimit, p, l, c.percent, c.limit)
		}
	}
}
