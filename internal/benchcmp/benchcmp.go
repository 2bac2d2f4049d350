// Package benchcmp measures courier against its speed and memory goals and
// prints them as a table: what, goal, measured, value, met. `make bench`
// runs it (cmd/courier-bench); it is not part of the courier binary. Each
// goal is a Row (rows.go), measured by Go benchmarks of courier's packages,
// a real courier process, or courier side by side with what it is compared
// with.
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
	"strings"
	"text/tabwriter"
	"time"
)

// Row is one goal.
type Row struct {
	What   string  // what is measured, e.g. "a 20 MB reply parsed"
	Goal   string  // the goal in words, e.g. "≤ 0.5 s"
	Limit  float64 // the value the goal allows
	Higher bool    // values above Limit (speed-ups) meet it, not those below
	Unit   string  // of the value: "×", "s", "MB", "ms"
	// Measure returns the value and a detail saying what it is made of.
	Measure func(e *Env) (value float64, detail string, err error)
}

// Env is what rows share in one run.
type Env struct {
	Dir    string // a scratch folder removed at the end of the run
	Module string // the folder of courier's go.mod
	Log    io.Writer
	Quick  bool // fewer rounds
	Ctx    context.Context

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

func (e *Env) Close() error { return os.RemoveAll(e.Dir) }

func (e *Env) Logf(format string, args ...any) { fmt.Fprintf(e.Log, "bench: "+format+"\n", args...) }

// Courier builds courier's binary once, without cgo as 'make build' does,
// and returns its path.
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

// Run measures the rows whose What matches filter, writes
// the table to w, and reports whether every goal was met.
func Run(e *Env, rows []Row, filter *regexp.Regexp, w io.Writer) bool {
	var results []Result
	all := true
	for _, r := range rows {
		if !filter.MatchString(r.What) || e.Ctx.Err() != nil {
			continue
		}
		e.Logf("measuring %s", r.What)
		start := time.Now()
		v, detail, err := r.Measure(e)
		res := Result{Row: r, Value: v, Detail: detail, Err: err, Met: err == nil && (r.Higher && v >= r.Limit || !r.Higher && v <= r.Limit)}
		all = all && (res.Met || errors.Is(err, errSkip))
		e.Logf("%s: %s (%s)", r.What, valueText(res), time.Since(start).Round(time.Second))
		results = append(results, res)
	}
	Print(w, results)
	return all
}

// Print writes the table: each goal met or not, a row that cannot be
// measured here skipped (and why), one that failed an error.
func Print(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tgoal\tmeasured\tvalue\tmet")
	for _, r := range results {
		met, detail := "met", r.Detail
		switch {
		case errors.Is(r.Err, errSkip):
			met, detail = "skipped", r.Err.Error()
		case r.Err != nil:
			met, detail = "error", r.Err.Error()
		case !r.Met:
			met = "NOT MET"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Row.What, r.Row.Goal, detail, valueText(r), met)
	}
	tw.Flush()
}

func valueText(r Result) string {
	if r.Err != nil {
		return "-"
	}
	if format, ok := map[string]string{"×": "%.2f×", "ms": "%.0f ms", "s": "%.2f s", "": "%.3g"}[r.Row.Unit]; ok {
		return fmt.Sprintf(format, r.Value)
	}
	return fmt.Sprintf("%.3g %s", r.Value, r.Row.Unit)
}

// sideBySide times a and b alternately, rounds times each after an
// untimed run of each to warm caches, and returns the fastest run of
// each: on a shared machine, the least disturbed run says most.
func sideBySide(e *Env, rounds int, a, b func() error) (time.Duration, time.Duration, error) {
	best := [2]time.Duration{}
	for i := range 2*rounds + 2 {
		if err := e.Ctx.Err(); err != nil {
			return 0, 0, err
		}
		start := time.Now()
		if err := []func() error{a, b}[i%2](); err != nil {
			return 0, 0, err
		}
		if d := time.Since(start); i >= 2 && (best[i%2] == 0 || d < best[i%2]) {
			best[i%2] = d
		}
	}
	return best[0], best[1], nil
}

// Rounds is n, or fewer in a quick run.
func (e *Env) Rounds(n int) int {
	if e.Quick {
		return max(1, n/3)
	}
	return n
}

func tail(out []byte) string { return string(out[max(len(out)-2000, 0):]) }

// errSkip says a row cannot be measured on this machine, and why.
var errSkip = errors.New("cannot be measured here")

// ms writes nanoseconds as milliseconds.
func ms[T time.Duration | float64](ns T) string { return fmt.Sprintf("%.0f ms", float64(ns)/1e6) }
