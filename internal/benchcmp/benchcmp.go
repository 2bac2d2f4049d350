// Package benchcmp measures courier against its speed and memory goals and
// prints them as a table: what, goal, measured, value, met. It is what
// `make bench` runs (through cmd/courier-bench); it is not part of the
// courier binary.
//
// Each goal is a Row. A row's Measure runs what it needs — Go benchmarks of
// courier's packages through Env.GoBench (run once per package and pattern,
// and shared between rows), a real courier process, or a side-by-side
// timing of courier and what it is compared with through SideBySide — and
// returns one value, which the table compares with the row's Limit. The
// rows are in rows.go.
package benchcmp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Row is one goal.
type Row struct {
	What string // what is measured, e.g. "a 20 MB reply parsed"
	Goal string // the goal in words, e.g. "≤ 0.5 s"
	// Limit is the value the goal allows; Higher says whether values above
	// it (speed-ups) or below it (times, ratios, memory) meet it.
	Limit  float64
	Higher bool
	Unit   string // of the value: "×", "s", "MB", "ms"
	// Measure returns the value and a detail saying what it is made of
	// (the times side by side, the output sizes).
	Measure func(e *Env) (value float64, detail string, err error)
}

// Env is what rows share in one run.
type Env struct {
	// Dir is a scratch folder removed at the end of the run.
	Dir string
	// Module is the folder of courier's go.mod.
	Module string
	// Log receives progress lines.
	Log io.Writer
	// Quick asks rows for fewer rounds.
	Quick bool
	// Ctx ends the run early (Ctrl-C).
	Ctx context.Context

	courier string
	gobench map[string]GoResults
	tree    string // a copy of Go's src/net
}

// NewEnv prepares a run in a new scratch folder.
func NewEnv(ctx context.Context, log io.Writer, quick bool) (*Env, error) {
	dir, err := os.MkdirTemp("", "courier-bench-")
	if err != nil {
		return nil, err
	}
	mod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("find courier's module: %w", err)
	}
	return &Env{Dir: dir, Module: filepath.Dir(strings.TrimSpace(string(mod))), Log: log, Quick: quick, Ctx: ctx,
		gobench: map[string]GoResults{}}, nil
}

// Close removes the scratch folder.
func (e *Env) Close() error { return os.RemoveAll(e.Dir) }

// Logf writes a progress line.
func (e *Env) Logf(format string, args ...any) {
	fmt.Fprintf(e.Log, "bench: "+format+"\n", args...)
}

// Courier builds courier's binary for this run, once, and returns its
// path. It is built as 'make build' and 'make install' build it, without
// cgo.
func (e *Env) Courier() (string, error) {
	if e.courier != "" {
		return e.courier, nil
	}
	bin := filepath.Join(e.Dir, "bin", "courier")
	cmd := exec.CommandContext(e.Ctx, "go", "build", "-o", bin, "./cmd/courier")
	cmd.Dir = e.Module
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build courier: %w\n%s", err, out)
	}
	e.courier = bin
	return bin, nil
}

// Result is a measured row.
type Result struct {
	Row    Row
	Value  float64
	Detail string
	Err    error
	Met    bool
}

// Run measures the rows whose What matches filter (all when nil), writing
// the table to w as it goes, and reports whether every goal was met.
func Run(e *Env, rows []Row, filter *regexp.Regexp, w io.Writer) ([]Result, bool) {
	var results []Result
	all := true
	for _, r := range rows {
		if filter != nil && !filter.MatchString(r.What) {
			continue
		}
		if e.Ctx.Err() != nil {
			break
		}
		e.Logf("measuring %s", r.What)
		start := time.Now()
		v, detail, err := r.Measure(e)
		res := Result{Row: r, Value: v, Detail: detail, Err: err}
		if err == nil {
			res.Met = v <= r.Limit
			if r.Higher {
				res.Met = v >= r.Limit
			}
		}
		all = all && (res.Met || errors.Is(err, errSkip))
		e.Logf("%s: %s (%s)", r.What, valueText(res), time.Since(start).Round(time.Second))
		results = append(results, res)
	}
	Print(w, results)
	return results, all
}

// Print writes the table of results: each goal met or not met, a row
// that could not be measured here skipped (and why), one that failed an
// error.
func Print(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tgoal\tmeasured\tvalue\tmet")
	for _, r := range results {
		met := "met"
		switch {
		case errors.Is(r.Err, errSkip):
			met = "skipped"
		case r.Err != nil:
			met = "error"
		case !r.Met:
			met = "NOT MET"
		}
		detail := r.Detail
		if r.Err != nil {
			detail = r.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Row.What, r.Row.Goal, detail, valueText(r), met)
	}
	tw.Flush()
}

func valueText(r Result) string {
	if r.Err != nil {
		return "-"
	}
	switch r.Row.Unit {
	case "×":
		return fmt.Sprintf("%.2f×", r.Value)
	case "ms":
		return fmt.Sprintf("%.0f ms", r.Value)
	case "s":
		return fmt.Sprintf("%.2f s", r.Value)
	case "":
		return fmt.Sprintf("%.3g", r.Value)
	}
	return fmt.Sprintf("%.3g %s", r.Value, r.Row.Unit)
}

// SideBySide times a and b alternately, rounds times each (after one
// untimed run of each to warm caches), and returns the fastest run of
// each: on a machine shared with other work, the least disturbed run is
// the one that says most about the program.
func SideBySide(e *Env, rounds int, a, b func() error) (time.Duration, time.Duration, error) {
	if err := a(); err != nil {
		return 0, 0, err
	}
	if err := b(); err != nil {
		return 0, 0, err
	}
	var ta, tb []time.Duration
	for range rounds {
		if err := e.Ctx.Err(); err != nil {
			return 0, 0, err
		}
		d, err := timed(a)
		if err != nil {
			return 0, 0, err
		}
		ta = append(ta, d)
		if d, err = timed(b); err != nil {
			return 0, 0, err
		}
		tb = append(tb, d)
	}
	return slices.Min(ta), slices.Min(tb), nil
}

func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

// percentile returns the p-th percentile (0-100) of ds, sorted in place.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*p/100)]
}

// Rounds is n, or fewer in a quick run.
func (e *Env) Rounds(n int) int {
	if e.Quick {
		return max(1, n/3)
	}
	return n
}

func tail(out []byte) string {
	const max = 2000
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return string(out)
}

// errSkip says a row cannot be measured on this machine, and why.
var errSkip = errors.New("cannot be measured here")

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
