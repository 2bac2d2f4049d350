// Command testreport runs a test command that prints test2json events
// (`go test -json ./...`, or `go tool test2json` around a test binary) and
// prints what CI needs to read: one line per package with its result, one
// line per skipped test with its reason (a skip is never silent), and the
// full output of each failing test. It exits 1 when a test failed or the
// command did not succeed, so `make test` fails as go test would.
//
//	go run ./internal/testreport go test -json ./...
//	go run ./internal/testreport < events.json
//
// Without a command it reads the events from stdin.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run reports on the events args' command prints (or stdin without args)
// and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if !report(stdin, stdout) {
			return 1
		}
		return 0
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = stdin, stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testreport: error: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testreport: error: %v\n", err)
		return 1
	}
	ok := report(out, stdout)
	io.Copy(io.Discard, out) // a report cut short must not block the command
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || ok {
			// A failing command with no failing test (a build that did not
			// start, a crash outside any test) must still fail the run.
			fmt.Fprintf(stderr, "testreport: %s: %v\n", strings.Join(args, " "), err)
		}
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// event is one test2json record.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
	// ImportPath is set on build-output and build-fail events.
	ImportPath string
}

// pkgRun gathers one package's events until its result.
type pkgRun struct {
	order  []string // tests in the order they started
	output map[string][]string
	result map[string]string // test -> pass, fail or skip
}

func newPkgRun() *pkgRun {
	return &pkgRun{output: map[string][]string{}, result: map[string]string{}}
}

// report reads test2json events from r and writes the summary to w. It
// returns false when a test, a package or a build failed, or a line was
// not an event (whatever it was, it is printed).
func report(r io.Reader, w io.Writer) bool {
	ok := true
	runs := map[string]*pkgRun{}
	var passed, skipped, failed, packages int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			// go test prints some errors (a package that does not exist)
			// as plain text.
			fmt.Fprintln(w, sc.Text())
			ok = false
			continue
		}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
			continue
		case "build-fail":
			ok = false
			continue
		}
		p := runs[e.Package]
		if p == nil {
			p = newPkgRun()
			runs[e.Package] = p
		}
		switch e.Action {
		case "run":
			p.order = append(p.order, e.Test)
		case "output":
			p.output[e.Test] = append(p.output[e.Test], e.Output)
		case "pass", "fail", "skip":
			if e.Test != "" {
				p.result[e.Test] = e.Action
				continue
			}
			packages++
			pp, ps, pf := p.print(w, e)
			passed, skipped, failed = passed+pp, skipped+ps, failed+pf
			if e.Action == "fail" {
				ok = false
			}
			delete(runs, e.Package)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(w, "testreport: reading the test events: %v\n", err)
		ok = false
	}
	// A package with no result: its test binary died or the command was
	// cut short. Whatever it printed is all there is to go on.
	for name, p := range runs {
		fmt.Fprintf(w, "FAIL  %s  (no result)\n", name)
		p.printFailures(w, true)
		ok = false
	}
	fmt.Fprintf(w, "%s: %d tests passed, %d skipped, %d failed\n", plural(packages, "package"), passed, skipped, failed)
	return ok
}

// print writes the package's line, its skipped tests and its failures,
// and returns how many tests passed, skipped and failed.
func (p *pkgRun) print(w io.Writer, end event) (passed, skipped, failed int) {
	for _, t := range p.order {
		switch p.result[t] {
		case "pass":
			passed++
		case "skip":
			skipped++
		case "fail":
			failed++
		}
	}
	counts := fmt.Sprintf("%d passed", passed)
	if skipped > 0 {
		counts += fmt.Sprintf(", %d skipped", skipped)
	}
	if failed > 0 {
		counts += fmt.Sprintf(", %d failed", failed)
	}
	// go tool test2json gives no package time.
	if end.Elapsed > 0 {
		counts = fmt.Sprintf("%.1fs  %s", end.Elapsed, counts)
	}
	switch {
	case end.Action == "skip" || len(p.order) == 0 && end.Action == "pass":
		fmt.Fprintf(w, "?     %s  (no tests)\n", end.Package)
	case end.Action == "pass":
		fmt.Fprintf(w, "ok    %s  %s\n", end.Package, counts)
	default:
		fmt.Fprintf(w, "FAIL  %s  %s\n", end.Package, counts)
	}
	for _, t := range p.order {
		if p.result[t] == "skip" {
			fmt.Fprintf(w, "      SKIP %s: %s\n", t, skipReason(p.output[t]))
		}
	}
	if end.Action == "fail" {
		p.printFailures(w, failed == 0)
	}
	return passed, skipped, failed
}

// printFailures writes the whole output of each failed test; with
// whole, the package's own output too (a crash, a timeout, a failing
// TestMain).
func (p *pkgRun) printFailures(w io.Writer, whole bool) {
	for _, t := range p.order {
		if p.result[t] != "fail" || framingOnly(p.output[t]) {
			continue
		}
		fmt.Fprintf(w, "--- output of %s:\n", t)
		for _, line := range p.output[t] {
			fmt.Fprint(w, line)
		}
	}
	if whole {
		for _, t := range p.order {
			if _, done := p.result[t]; !done {
				fmt.Fprintf(w, "--- output of %s (no result):\n%s", t, strings.Join(p.output[t], ""))
			}
		}
		fmt.Fprint(w, strings.Join(p.output[""], ""))
	}
}

// framing matches the lines go test itself writes around a test's output.
var framing = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)\s|--- (PASS|FAIL|SKIP): )`)

// framingOnly reports whether a test printed nothing of its own: a parent
// that failed because a subtest did.
func framingOnly(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && !framing.MatchString(l) {
			return false
		}
	}
	return true
}

// logPrefix is the "file_test.go:12: " that t.Log and t.Skip put first.
var logPrefix = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason is the last thing a skipped test logged, on one line: the
// message given to t.Skip, or for a testscript script the "skip" line that
// stopped it (the last line of the script's log).
func skipReason(lines []string) string {
	var entry []string
	for _, l := range lines {
		l = strings.TrimRight(l, "\n")
		switch {
		case framing.MatchString(l):
		case logPrefix.MatchString(l):
			entry = []string{strings.TrimSpace(logPrefix.ReplaceAllString(l, ""))}
		case strings.TrimSpace(l) != "":
			entry = append(entry, strings.TrimSpace(l))
		}
	}
	if len(entry) == 0 {
		return "(no reason given)"
	}
	if last := entry[len(entry)-1]; len(entry) > 1 && strings.HasPrefix(last, "> ") {
		return strings.TrimPrefix(last, "> ")
	}
	return strings.Join(entry, " ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
