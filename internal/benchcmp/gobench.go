package benchcmp

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// GoResults are a Go benchmark run's figures by benchmark name (without
// the -GOMAXPROCS suffix) and unit ("ns/op", "B/op", a reported metric).
type GoResults map[string]map[string]float64

// GoBench runs the benchmarks of pkg matching pattern count times, once
// for however many rows ask, and returns each figure's best (the lowest):
// on a shared machine, a disturbed run says little about the code.
func (e *Env) GoBench(pkg, pattern, benchtime string, count int) (GoResults, error) {
	key := fmt.Sprintf("%s %s %s %d", pkg, pattern, benchtime, count)
	if r, ok := e.gobench[key]; ok {
		return r, nil
	}
	e.Logf("go test -bench %s %s", pattern, pkg)
	var all bytes.Buffer
	for range max(count, 1) {
		cmd := exec.CommandContext(e.Ctx, "go", "test", "-run", "^$", "-bench", pattern, "-benchmem", "-benchtime", benchtime, "-count", "1", "-timeout", "60m", pkg)
		cmd.Dir = e.Module
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("go test -bench %s %s: %w\n%s", pattern, pkg, err, tail(out))
		}
		all.Write(out)
	}
	r := parseGoBench(all.Bytes())
	if len(r) == 0 {
		return nil, fmt.Errorf("go test -bench %s %s printed no results:\n%s", pattern, pkg, tail(all.Bytes()))
	}
	e.gobench[key] = r
	return r, nil
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseGoBench reads lines like
// "BenchmarkX/y-2  3  123 ns/op  45.6 MB/s  789 B/op  1 allocs/op",
// keeping the lowest of each figure.
func parseGoBench(out []byte) GoResults {
	r := GoResults{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		if r[name] == nil {
			r[name] = map[string]float64{}
		}
		figures := r[name]
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			unit := f[i+1]
			if old, seen := figures[unit]; !seen || v < old {
				figures[unit] = v
			}
		}
	}
	return r
}
