package benchcmp

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/human"
)

// All lists every row: the floors courier keeps.
func All() []Row {
	return []Row{
		{What: "a 20 MB reply parsed", Goal: "≤ 0.5 s", Limit: 0.5, Unit: "s",
			Measure: goRow("./internal/protocol", "^BenchmarkParse$/^ordinary$", "3x", 3, func(v []float64) (float64, string, error) {
				return v[0] / 1e9, ms(v[0]), nil
			}, "BenchmarkParse/ordinary ns/op")},
		{What: "the worst adversarial 20 MB reply parsed", Goal: "≤ 3× an ordinary one", Limit: 3, Unit: "×", Measure: measureAdversarial},
		{What: "a 20 MB reply carried out (courier process)", Goal: "resident memory ≤ 3× the reply", Limit: 3, Unit: "×", Measure: measureResident},
		{What: "reply saved -> next request written (courier watch, Go's src/net)", Goal: "p50 ≤ 50 ms, renamed or closed in place", Limit: 50, Unit: "ms", Measure: measureSettle},
		{What: "packing Go's src/net (--include '**', default budget)", Goal: "≥ 30× faster than repomix", Limit: 30, Higher: true, Unit: "×", Measure: measureRepomix},
		{What: "READ_FILE of a 300 MB file, 500 lines shown", Goal: "≤ 64 MB of memory", Limit: 64, Unit: "MB",
			Measure: goRow("./internal/runner", "^BenchmarkReadFileLarge$", "3x", 1, func(v []float64) (float64, string, error) {
				return v[0], fmt.Sprintf("%.2f MB allocated in %s", v[0], ms(v[1])), nil
			}, "BenchmarkReadFileLarge MB-allocated", "BenchmarkReadFileLarge ns/op")},
		{What: "undo of a turn 200 turns back", Goal: "constant: ≤ 2× the undo of the last turn", Limit: 2, Unit: "×",
			Measure: goRow("./internal/runner", "^BenchmarkUndo$", "3x", 3, func(v []float64) (float64, string, error) {
				return v[2] / v[0], fmt.Sprintf("depth 1: %s, depth 50: %s, depth 200: %s", ms(v[0]), ms(v[1]), ms(v[2])), nil
			}, "BenchmarkUndo/depth=1 ns/op", "BenchmarkUndo/depth=50 ns/op", "BenchmarkUndo/depth=200 ns/op")},
		// The extra time a new session's first build takes over the
		// person's own, on the person's caches.
		{What: "a new session's first go build (net/http, encoding/json) against the same build outside courier, your caches warm", Goal: "within 1.5 s of it", Limit: 1.5, Unit: "s",
			Measure: goRow("./internal/shell", "^BenchmarkFirstGoBuild$", "3x", 3, func(v []float64) (float64, string, error) {
				return (v[0] - v[1]) / 1e9, fmt.Sprintf("%s in a new session, %s outside", ms(v[0]), ms(v[1])), nil
			}, "BenchmarkFirstGoBuild/first_build_of_a_new_session ns/op", "BenchmarkFirstGoBuild/outside_courier ns/op")},
		// Its first request and environment section written.
		{What: "courier new in a git project of a thousand files, the machine's tools known", Goal: "≤ 150 ms", Limit: 150, Unit: "ms",
			Measure: goRow("./internal/cli", "^BenchmarkNew$/^tools_kept$", "20x", 3, func(v []float64) (float64, string, error) {
				return v[0] / 1e6, ms(v[0]), nil
			}, "BenchmarkNew/tools_kept ns/op")},
		// Files of 250 bytes; more than 40 MB of disk fails too.
		{What: "a session's first snapshot of 100,000 small files", Goal: "≤ 5 s, and ≤ 40 MB of disk", Limit: 5, Unit: "s",
			Measure: goRow("./internal/history", "^BenchmarkFirstSnapshot$/^files=100000$", "1x", 2, func(v []float64) (float64, string, error) {
				if v[1] > 40 {
					return 0, "", fmt.Errorf("the store takes %.1f MB of disk, more than 40 MB", v[1])
				}
				return v[0] / 1e9, fmt.Sprintf("%s, %.1f MB of disk", ms(v[0]), v[1]), nil
			}, "BenchmarkFirstSnapshot/files=100000 ns/op", "BenchmarkFirstSnapshot/files=100000 store-MB")},
		// The world built, the person's caches under the session's layer,
		// limits.
		{What: "starting a confined command (true), as courier runs commands", Goal: "≤ 30 ms", Limit: 30, Unit: "ms",
			Measure: goRow("./internal/shell", "^BenchmarkRunSandboxed$/^(unconfined|as_courier_runs_them)$", "30x", 3, func(v []float64) (float64, string, error) {
				return v[0] / 1e6, fmt.Sprintf("%s, unconfined %s", ms(v[0]), ms(v[1])), nil
			}, "BenchmarkRunSandboxed/as_courier_runs_them ns/op", "BenchmarkRunSandboxed/unconfined ns/op")},
		// Timed by headless Chromium.
		{What: "courier serve: a session's page loaded afresh in Chromium, scripts and style included", Goal: "≤ 100 ms", Limit: 100, Unit: "ms",
			Measure: goRow("./internal/serve", "^BenchmarkPage$", "15x", 3, pageFigure, "BenchmarkPage/first_load ms-load")},
		// From the turn's end told on /api/events.
		{What: "courier serve: an applied answer's results on the page after the turn's end", Goal: "≤ 100 ms", Limit: 100, Unit: "ms",
			Measure: goRow("./internal/serve", "^BenchmarkPage$", "15x", 3, pageFigure, "BenchmarkPage/results_after_turn ms-after-turn")},
	}
}

func pageFigure(v []float64) (float64, string, error) {
	return v[0], fmt.Sprintf("%.0f ms, the median of 15 turns or loads", v[0]), nil
}

// goRow measures a row with Go benchmarks (GoBench), best of runs: value
// makes the row's value and detail of the figures asked, each "name unit".
func goRow(pkg, pattern, benchtime string, runs int, value func(v []float64) (float64, string, error), figures ...string) func(*Env) (float64, string, error) {
	return func(e *Env) (float64, string, error) {
		r, err := e.GoBench(pkg, pattern, benchtime, e.Rounds(runs))
		if err != nil {
			return 0, "", err
		}
		v := make([]float64, len(figures))
		for i, f := range figures {
			name, unit, _ := strings.Cut(f, " ")
			var ok bool
			if v[i], ok = r[name][unit]; !ok {
				return 0, "", fmt.Errorf("no %s for %s in the benchmark output", unit, name)
			}
		}
		x, detail, err := value(v)
		if n := e.Rounds(runs); n > 1 {
			detail += fmt.Sprintf(", best of %d runs", n)
		}
		return x, detail, err
	}
}

// measureAdversarial takes the worst of the adversarial inputs, each
// timed against the ordinary reply in alternation, so that a busy moment
// slows both sides of a ratio.
func measureAdversarial(e *Env) (float64, string, error) {
	r, err := e.GoBench("./internal/protocol", "^BenchmarkParseRatio$", "5x", e.Rounds(3))
	if err != nil {
		return 0, "", err
	}
	worst, name := 0.0, ""
	for n, figures := range r {
		if v, ok := figures["x-ordinary"]; ok && v > worst {
			worst, name = v, strings.TrimPrefix(n, "BenchmarkParseRatio/")
		}
	}
	if name == "" {
		return 0, "", errors.New("no x-ordinary figures in the parser's benchmark output")
	}
	return worst, fmt.Sprintf("worst %s, median of 5 rounds against the ordinary reply, best of %d runs", name, e.Rounds(3)), nil
}

// measureResident compares the peak resident memory of 'courier process'
// with the size of its reply, one CREATE_FILE just under 20 MB. The reply
// is written to a file, never held here: see forgetOwnPeak.
func measureResident(e *Env) (float64, string, error) {
	bin, err := e.Courier()
	if err != nil {
		return 0, "", err
	}
	replyFile := filepath.Join(e.Dir, "resident-reply.txt")
	f, err := os.Create(replyFile)
	if err != nil {
		return 0, "", err
	}
	line := "\tfmt.Println(\"a line of generated code that fills the file\")\n"
	w := bufio.NewWriter(f)
	w.WriteString("I'll write it.\n\n[CREATE_FILE path=\"big.go\"]\n")
	for range (20<<20 - 100) / len(line) {
		w.WriteString(line)
	}
	w.WriteString("[/CREATE_FILE]\n")
	if err := cmp.Or(w.Flush(), f.Close()); err != nil {
		return 0, "", err
	}
	info, err := os.Stat(replyFile)
	if err != nil {
		return 0, "", err
	}
	size, best := info.Size(), 0.0
	for range e.Rounds(3) {
		root, err := os.MkdirTemp(e.Dir, "resident-")
		if err != nil {
			return 0, "", err
		}
		if _, err := courier(e, bin, root, "--environment=false", "new", "--no-watch", "write big.go"); err != nil {
			return 0, "", err
		}
		if err := os.Link(replyFile, filepath.Join(root, "inbox", "reply.txt")); err != nil {
			return 0, "", err
		}
		if err := forgetOwnPeak(); err != nil {
			return 0, "", err
		}
		ps, err := courier(e, bin, root, "process")
		if err != nil {
			return 0, "", err
		}
		rss, err := peakRSS(ps)
		if err != nil {
			return 0, "", err
		}
		if v := float64(rss) / float64(size); best == 0 || v < best {
			best = v
		}
		os.RemoveAll(root)
	}
	return best, fmt.Sprintf("peak resident %s for a reply of %s, least of %d runs", human.Bytes(int64(best*float64(size))), human.Bytes(size), e.Rounds(3)), nil
}

// courier runs courier on root, and returns how it ended.
func courier(e *Env, bin, root string, args ...string) (*os.ProcessState, error) {
	cmd := exec.CommandContext(e.Ctx, bin, append([]string{"--root", root, "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("courier %s: %w\n%s", strings.Join(args, " "), err, tail(out))
	}
	return cmd.ProcessState, nil
}

// goNet copies Go's src/net into the scratch folder, once.
func goNet(e *Env) (string, error) {
	if e.tree != "" {
		return e.tree, nil
	}
	src := filepath.Join(runtime.GOROOT(), "src", "net")
	if _, err := os.Stat(src); err != nil {
		return "", fmt.Errorf("%w: no Go source tree at %s", errSkip, src)
	}
	dst := filepath.Join(e.Dir, "src-net")
	if out, err := exec.CommandContext(e.Ctx, "cp", "-r", src, dst).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copy %s: %w\n%s", src, err, out)
	}
	e.tree = dst
	return dst, nil
}

// measureRepomix times courier's first request with --include '**' on Go's
// src/net next to repomix, which people use to paste whole projects into
// a chat; without the description of the machine, which waits on tools'
// --version whatever is packed.
func measureRepomix(e *Env) (float64, string, error) {
	if _, err := exec.LookPath("npm"); err != nil {
		return 0, "", fmt.Errorf("%w: npm is not installed", errSkip)
	}
	tree, err := goNet(e)
	if err != nil {
		return 0, "", err
	}
	bin, err := e.Courier()
	if err != nil {
		return 0, "", err
	}
	dir := filepath.Join(e.Dir, "npm")
	e.Logf("installing repomix from npm into %s", dir)
	install := exec.CommandContext(e.Ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error", "repomix")
	if out, err := install.CombinedOutput(); err != nil {
		return 0, "", fmt.Errorf("npm install repomix: %w\n%s", err, tail(out))
	}
	root, err := os.MkdirTemp(e.Dir, "packroot-")
	if err != nil {
		return 0, "", err
	}
	pack := func() error {
		_, err := courier(e, bin, root, "--workspace", tree, "--token-budget", "100000", "--environment=false", "new", "--no-watch", "--include", "**", "explain how this code is organised")
		return err
	}
	// repomix writes its pack into the folder it packs: moved out, so that
	// the next run packs the same files.
	out := filepath.Join(e.Dir, "repomix-output.xml")
	repomix := func() error {
		cmd := exec.CommandContext(e.Ctx, filepath.Join(dir, "node_modules", ".bin", "repomix"))
		cmd.Dir = tree
		if o, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("repomix: %w\n%s", err, tail(o))
		}
		return os.Rename(filepath.Join(tree, "repomix-output.xml"), out)
	}
	tc, tr, err := sideBySide(e, e.Rounds(3), pack, repomix)
	if err != nil {
		return 0, "", err
	}
	requests, _ := filepath.Glob(filepath.Join(root, "outbox", "*"))
	var size int64
	if len(requests) > 0 {
		if info, err := os.Stat(requests[0]); err == nil {
			size = info.Size()
		}
	}
	info, err := os.Stat(out)
	if err != nil {
		return 0, "", err
	}
	return float64(tr) / float64(tc), fmt.Sprintf("courier %s (request %s), repomix %s (pack %s)",
		ms(tc), human.Bytes(size), ms(tr), human.Bytes(info.Size())), nil
}

// measureSettle times a real 'courier watch' on Go's src/net from a reply
// saved (renamed into inbox/ as browsers save, or written in place and
// closed) to the next request's file in outbox/.
func measureSettle(e *Env) (float64, string, error) {
	bin, err := e.Courier()
	if err != nil {
		return 0, "", err
	}
	tree, err := goNet(e)
	if err != nil {
		return 0, "", err
	}
	root, err := os.MkdirTemp(e.Dir, "settle-")
	if err != nil {
		return 0, "", err
	}
	if _, err := courier(e, bin, root, "--workspace", tree, "--environment=false", "new", "--no-watch", "settle"); err != nil {
		return 0, "", err
	}
	first, err := filepath.Glob(filepath.Join(root, "outbox", "*_seq0001.txt"))
	if err != nil || len(first) != 1 {
		return 0, "", fmt.Errorf("no first request in %s", root)
	}
	id := strings.TrimSuffix(filepath.Base(first[0]), "_seq0001.txt")

	var said bytes.Buffer // read once the watch has ended
	ctx, stop := context.WithCancel(e.Ctx)
	watch := exec.CommandContext(ctx, bin, "--root", root, "watch", id)
	watch.Cancel = func() error { return watch.Process.Signal(os.Interrupt) }
	watch.WaitDelay = 10 * time.Second
	watch.Env = append(os.Environ(), "NO_COLOR=1")
	watch.Stdout, watch.Stderr = &said, &said
	if err := watch.Start(); err != nil {
		stop()
		return 0, "", fmt.Errorf("courier watch: %w", err)
	}
	var ended error
	exited := make(chan struct{})
	go func() { ended = watch.Wait(); close(exited) }()
	defer func() { stop(); <-exited }()

	seq := 1
	// turn saves a reply, renamed into inbox/ or written there, and times
	// it until the next request is written.
	turn := func(rename bool) (time.Duration, error) {
		p := filepath.Join(root, "inbox", fmt.Sprintf("reply%04d.txt", seq))
		tmp := p
		if rename {
			tmp = filepath.Join(root, ".download.part")
		}
		reply := fmt.Appendf(nil, "Session: %s\nSequence: %d\n[MESSAGE]\nround %d\n[/MESSAGE]\n", id, seq, seq)
		if err := os.WriteFile(tmp, reply, 0o644); err != nil {
			return 0, err
		}
		start := time.Now()
		if err := os.Rename(tmp, p); err != nil {
			return 0, err
		}
		next := filepath.Join(root, "outbox", fmt.Sprintf("%s_seq%04d.txt", id, seq+1))
		for ; ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(next); err == nil {
				seq++
				return time.Since(start), nil
			}
			select {
			case <-exited:
				return 0, fmt.Errorf("courier watch ended: %v\n%s", ended, tail(said.Bytes()))
			default:
			}
			if time.Since(start) > time.Minute {
				return 0, fmt.Errorf("no request %d a minute after the reply", seq+1)
			}
		}
	}
	// The first turn also waits for the watch to start.
	if _, err := turn(true); err != nil {
		return 0, "", err
	}
	rounds := e.Rounds(15)
	var worst float64
	var parts []string
	for _, rename := range []bool{true, false} {
		lat := make([]time.Duration, rounds)
		for k := range lat {
			if lat[k], err = turn(rename); err != nil {
				return 0, "", err
			}
		}
		slices.Sort(lat)
		p50 := lat[len(lat)/2]
		worst = max(worst, float64(p50)/float64(time.Millisecond))
		parts = append(parts, fmt.Sprintf("%s p50 %s (max %s)", map[bool]string{true: "renamed", false: "closed in place"}[rename], ms(p50), ms(slices.Max(lat))))
	}
	return worst, strings.Join(parts, ", ") + fmt.Sprintf(" over %d replies each", rounds), nil
}
