package benchcmp

import (
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
		{What: "a 20 MB reply parsed", Goal: "≤ 0.5 s", Limit: 0.5, Unit: "s", Measure: measureParse},
		{What: "the worst adversarial 20 MB reply parsed", Goal: "≤ 3× an ordinary one", Limit: 3, Unit: "×", Measure: measureAdversarial},
		{What: "a 20 MB reply carried out (courier process)", Goal: "resident memory ≤ 3× the reply", Limit: 3, Unit: "×", Measure: measureResident},
		{What: "reply saved -> next request written (courier watch, Go's src/net)", Goal: "p50 ≤ 50 ms, renamed or closed in place", Limit: 50, Unit: "ms", Measure: measureSettle},
		{What: "packing Go's src/net (--include '**', default budget)", Goal: "≥ 30× faster than repomix", Limit: 30, Higher: true, Unit: "×", Measure: measureRepomix},
		{What: "READ_FILE of a 300 MB file, 500 lines shown", Goal: "≤ 64 MB of memory", Limit: 64, Unit: "MB", Measure: measureReadFile},
		{What: "undo of a turn 200 turns back", Goal: "constant: ≤ 2× the undo of the last turn", Limit: 2, Unit: "×", Measure: measureUndo},
		{What: "a new session's first go build (net/http, encoding/json) against the same build outside courier, your caches warm", Goal: "within 1.5 s of it", Limit: 1.5, Unit: "s", Measure: measureFirstBuild},
		{What: "courier new in a git project of a thousand files, the machine's tools known", Goal: "≤ 150 ms", Limit: 150, Unit: "ms", Measure: measureNew},
		{What: "a session's first snapshot of 100,000 small files", Goal: "≤ 5 s, and ≤ 40 MB of disk", Limit: 5, Unit: "s", Measure: measureFirstSnapshot},
		{What: "starting a confined command (true), as courier runs commands", Goal: "≤ 30 ms", Limit: 30, Unit: "ms", Measure: measureConfinedStart},
		{What: "courier serve: a session's page loaded afresh in Chromium, scripts and style included", Goal: "≤ 100 ms", Limit: 100, Unit: "ms", Measure: measurePageLoad},
		{What: "courier serve: an applied answer's results on the page after the turn's end", Goal: "≤ 100 ms", Limit: 100, Unit: "ms", Measure: measurePageResults},
	}
}

// bench runs Go benchmarks (GoBench) and returns the figures asked, each
// "name unit".
func (e *Env) bench(pkg, pattern, benchtime string, count int, figures ...string) ([]float64, error) {
	r, err := e.GoBench(pkg, pattern, benchtime, count)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(figures))
	for i, f := range figures {
		name, unit, _ := strings.Cut(f, " ")
		if out[i], err = r.Get(name, unit); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// measurePageLoad is the median load time of a session's page in headless
// Chromium, as the browser times it.
func measurePageLoad(e *Env) (float64, string, error) {
	return pageFigure(e, "BenchmarkPage/first_load ms-load")
}

// measurePageResults is how long after the turn's end is told on
// /api/events its results show on the page.
func measurePageResults(e *Env) (float64, string, error) {
	return pageFigure(e, "BenchmarkPage/results_after_turn ms-after-turn")
}

func pageFigure(e *Env, figure string) (float64, string, error) {
	v, err := e.bench("./internal/serve", "^BenchmarkPage$", "15x", e.Rounds(3), figure)
	if err != nil {
		return 0, "", err
	}
	return v[0], fmt.Sprintf("%.0f ms, the median of 15 turns or loads, best of %d runs", v[0], e.Rounds(3)), nil
}

// measureFirstBuild is the extra time a new session's first build takes
// over the person's own, on the person's caches.
func measureFirstBuild(e *Env) (float64, string, error) {
	v, err := e.bench("./internal/shell", "^BenchmarkFirstGoBuild$", "3x", e.Rounds(3),
		"BenchmarkFirstGoBuild/first_build_of_a_new_session ns/op", "BenchmarkFirstGoBuild/outside_courier ns/op")
	if err != nil {
		return 0, "", err
	}
	return (v[0] - v[1]) / 1e9, fmt.Sprintf("%s in a new session, %s outside, best of %d runs", ms(v[0]), ms(v[1]), e.Rounds(3)), nil
}

// measureConfinedStart is what running 'true' costs confined as courier
// runs commands: the world built, the person's caches under the
// session's layer, limits.
func measureConfinedStart(e *Env) (float64, string, error) {
	v, err := e.bench("./internal/shell", "^BenchmarkRunSandboxed$/^(unconfined|as_courier_runs_them)$", "30x", e.Rounds(3),
		"BenchmarkRunSandboxed/as_courier_runs_them ns/op", "BenchmarkRunSandboxed/unconfined ns/op")
	if err != nil {
		return 0, "", err
	}
	return v[0] / 1e6, fmt.Sprintf("%s, unconfined %s, best of %d runs", ms(v[0]), ms(v[1]), e.Rounds(3)), nil
}

// measureNew is 'courier new' on a project of a thousand files, its first
// request and environment section written (BenchmarkNew).
func measureNew(e *Env) (float64, string, error) {
	v, err := e.bench("./internal/cli", "^BenchmarkNew$/^tools_kept$", "20x", e.Rounds(3), "BenchmarkNew/tools_kept ns/op")
	if err != nil {
		return 0, "", err
	}
	return v[0] / 1e6, fmt.Sprintf("%s, best of %d runs", ms(v[0]), e.Rounds(3)), nil
}

// measureFirstSnapshot is a new session's snapshot of 100,000 files of
// 250 bytes (BenchmarkFirstSnapshot); more than 40 MB of disk fails too.
func measureFirstSnapshot(e *Env) (float64, string, error) {
	v, err := e.bench("./internal/history", "^BenchmarkFirstSnapshot$/^files=100000$", "1x", e.Rounds(2),
		"BenchmarkFirstSnapshot/files=100000 ns/op", "BenchmarkFirstSnapshot/files=100000 store-MB")
	if err != nil {
		return 0, "", err
	}
	if v[1] > 40 {
		return 0, "", fmt.Errorf("the store takes %.1f MB of disk, more than 40 MB", v[1])
	}
	return v[0] / 1e9, fmt.Sprintf("%s, %.1f MB of disk, best of %d runs", ms(v[0]), v[1], e.Rounds(2)), nil
}

func measureParse(e *Env) (float64, string, error) {
	v, err := e.bench("./internal/protocol", "^BenchmarkParse$/^ordinary$", "3x", e.Rounds(3), "BenchmarkParse/ordinary ns/op")
	if err != nil {
		return 0, "", err
	}
	return v[0] / 1e9, fmt.Sprintf("%s, best of %d runs", ms(v[0]), e.Rounds(3)), nil
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
// with the size of its reply, one CREATE_FILE just under 20 MB.
func measureResident(e *Env) (float64, string, error) {
	bin, err := e.Courier()
	if err != nil {
		return 0, "", err
	}
	line := "\tfmt.Println(\"a line of generated code that fills the file\")\n"
	body := strings.Repeat(line, (20<<20-100)/len(line))
	reply := "I'll write it.\n\n[CREATE_FILE path=\"big.go\"]\n" + body + "[/CREATE_FILE]\n"
	best := 0.0
	for range e.Rounds(3) {
		root, err := os.MkdirTemp(e.Dir, "resident-")
		if err != nil {
			return 0, "", err
		}
		if err := courier(e, bin, root, "--environment=false", "new", "--no-watch", "write big.go"); err != nil {
			return 0, "", err
		}
		if err := os.WriteFile(filepath.Join(root, "inbox", "reply.txt"), []byte(reply), 0o644); err != nil {
			return 0, "", err
		}
		cmd := exec.CommandContext(e.Ctx, bin, "--root", root, "--quiet", "process")
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, "", fmt.Errorf("courier process: %w\n%s", err, tail(out))
		}
		rss, err := peakRSS(cmd.ProcessState)
		if err != nil {
			return 0, "", err
		}
		if v := float64(rss) / float64(len(reply)); best == 0 || v < best {
			best = v
		}
		os.RemoveAll(root)
	}
	return best, fmt.Sprintf("peak resident %s for a reply of %s, least of %d runs", human.Bytes(int64(best*float64(len(reply)))), human.Bytes(int64(len(reply))), e.Rounds(3)), nil
}

func courier(e *Env, bin, root string, args ...string) error {
	cmd := exec.CommandContext(e.Ctx, bin, append([]string{"--root", root, "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("courier %s: %w\n%s", strings.Join(args, " "), err, tail(out))
	}
	return nil
}

func measureReadFile(e *Env) (float64, string, error) {
	v, err := e.bench("./internal/runner", "^BenchmarkReadFileLarge$", "3x", 1,
		"BenchmarkReadFileLarge MB-allocated", "BenchmarkReadFileLarge ns/op")
	if err != nil {
		return 0, "", err
	}
	return v[0], fmt.Sprintf("%.2f MB allocated in %s", v[0], ms(v[1])), nil
}

func measureUndo(e *Env) (float64, string, error) {
	v, err := e.bench("./internal/runner", "^BenchmarkUndo$", "3x", e.Rounds(3),
		"BenchmarkUndo/depth=1 ns/op", "BenchmarkUndo/depth=50 ns/op", "BenchmarkUndo/depth=200 ns/op")
	if err != nil {
		return 0, "", err
	}
	return v[2] / v[0], fmt.Sprintf("depth 1: %s, depth 50: %s, depth 200: %s", ms(v[0]), ms(v[1]), ms(v[2])), nil
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
		return courier(e, bin, root, "--workspace", tree, "--token-budget", "100000", "--environment=false", "new", "--no-watch", "--include", "**", "explain how this code is organised")
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
	if err := courier(e, bin, root, "--workspace", tree, "--environment=false", "new", "--no-watch", "settle"); err != nil {
		return 0, "", err
	}
	first, err := filepath.Glob(filepath.Join(root, "outbox", "*_seq0001.txt"))
	if err != nil || len(first) != 1 {
		return 0, "", fmt.Errorf("no first request in %s", root)
	}
	id := strings.TrimSuffix(filepath.Base(first[0]), "_seq0001.txt")

	log := filepath.Join(root, "watch.log")
	out, err := os.Create(log)
	if err != nil {
		return 0, "", err
	}
	defer out.Close()
	ctx, stop := context.WithCancel(e.Ctx)
	watch := exec.CommandContext(ctx, bin, "--root", root, "watch", id)
	watch.Cancel = func() error { return watch.Process.Signal(os.Interrupt) }
	watch.WaitDelay = 10 * time.Second
	watch.Env = append(os.Environ(), "NO_COLOR=1")
	watch.Stdout, watch.Stderr = out, out
	if err := watch.Start(); err != nil {
		stop()
		return 0, "", fmt.Errorf("courier watch: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- watch.Wait() }()
	defer func() { stop(); <-exited }()

	seq := 1
	turn := func(save func(p string, data []byte) (time.Time, error)) (time.Duration, error) {
		reply := fmt.Appendf(nil, "Session: %s\nSequence: %d\n[MESSAGE]\nround %d\n[/MESSAGE]\n", id, seq, seq)
		start, err := save(filepath.Join(root, "inbox", fmt.Sprintf("reply%04d.txt", seq)), reply)
		if err != nil {
			return 0, err
		}
		next := filepath.Join(root, "outbox", fmt.Sprintf("%s_seq%04d.txt", id, seq+1))
		for {
			if _, err := os.Stat(next); err == nil {
				seq++
				return time.Since(start), nil
			}
			select {
			case err := <-exited:
				said, _ := os.ReadFile(log)
				return 0, fmt.Errorf("courier watch ended: %v\n%s", err, tail(said))
			case <-e.Ctx.Done():
				return 0, e.Ctx.Err()
			case <-time.After(time.Millisecond):
			}
			if time.Since(start) > time.Minute {
				return 0, fmt.Errorf("no request %d a minute after the reply", seq+1)
			}
		}
	}
	renamed := func(p string, data []byte) (time.Time, error) {
		tmp := filepath.Join(root, ".download.part")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return time.Time{}, err
		}
		start := time.Now()
		return start, os.Rename(tmp, p)
	}
	closed := func(p string, data []byte) (time.Time, error) {
		err := os.WriteFile(p, data, 0o644)
		return time.Now(), err
	}
	// The first turn also waits for the watch to start.
	if _, err := turn(renamed); err != nil {
		return 0, "", err
	}
	rounds := e.Rounds(15)
	var worst float64
	var parts []string
	for _, how := range []struct {
		name string
		save func(string, []byte) (time.Time, error)
	}{{"renamed", renamed}, {"closed in place", closed}} {
		var lat []time.Duration
		for range rounds {
			d, err := turn(how.save)
			if err != nil {
				return 0, "", err
			}
			lat = append(lat, d)
		}
		slices.Sort(lat)
		p50 := lat[len(lat)/2]
		worst = max(worst, float64(p50)/float64(time.Millisecond))
		parts = append(parts, fmt.Sprintf("%s p50 %s (max %s)", how.name, ms(p50), ms(slices.Max(lat))))
	}
	return worst, strings.Join(parts, ", ") + fmt.Sprintf(" over %d replies each", rounds), nil
}
