package benchcmp

import (
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
		{What: "starting a confined command (true), as courier runs commands", Goal: "≤ 30 ms", Limit: 30, Unit: "ms", Measure: measureConfinedStart},
		{What: "courier serve: a session's page loaded afresh in Chromium, scripts and style included", Goal: "≤ 100 ms", Limit: 100, Unit: "ms", Measure: measurePageLoad},
		{What: "courier serve: an applied answer's results on the page after the turn's end", Goal: "≤ 100 ms", Limit: 100, Unit: "ms", Measure: measurePageResults},
	}
}

// measurePageLoad is the median load time of a session's page in headless
// Chromium, as the browser times it (BenchmarkPage/first_load).
func measurePageLoad(e *Env) (float64, string, error) {
	return pageFigure(e, "first_load", "ms-load")
}

// measurePageResults is how long after the turn's end is told on
// /api/events its results show on the page (BenchmarkPage).
func measurePageResults(e *Env) (float64, string, error) {
	return pageFigure(e, "results_after_turn", "ms-after-turn")
}

func pageFigure(e *Env, name, unit string) (float64, string, error) {
	r, err := e.GoBench("./internal/serve", "^BenchmarkPage$", "15x", e.Rounds(3))
	if err != nil {
		return 0, "", err
	}
	v, err := r.Get("BenchmarkPage/"+name, unit)
	if err != nil {
		return 0, "", err
	}
	return v, fmt.Sprintf("%.0f ms, the median of 15 turns or loads, best of %d runs", v, e.Rounds(3)), nil
}

// measureFirstBuild is the extra time a new session's first build takes
// over the person's own, on the person's caches (BenchmarkFirstGoBuild).
func measureFirstBuild(e *Env) (float64, string, error) {
	r, err := e.GoBench("./internal/shell", "^BenchmarkFirstGoBuild$", "3x", e.Rounds(3))
	if err != nil {
		return 0, "", err
	}
	outside, err := r.Get("BenchmarkFirstGoBuild/outside_courier", "ns/op")
	if err != nil {
		return 0, "", err
	}
	session, err := r.Get("BenchmarkFirstGoBuild/first_build_of_a_new_session", "ns/op")
	if err != nil {
		return 0, "", err
	}
	return (session - outside) / 1e9, fmt.Sprintf("%s in a new session, %s outside, best of %d runs", ms(time.Duration(session)), ms(time.Duration(outside)), e.Rounds(3)), nil
}

// measureConfinedStart is what running 'true' costs confined as courier
// runs commands: the world built, the person's caches under the
// session's layer, limits (BenchmarkRunSandboxed).
func measureConfinedStart(e *Env) (float64, string, error) {
	r, err := e.GoBench("./internal/shell", "^BenchmarkRunSandboxed$/^(unconfined|as_courier_runs_them)$", "30x", e.Rounds(3))
	if err != nil {
		return 0, "", err
	}
	ns, err := r.Get("BenchmarkRunSandboxed/as_courier_runs_them", "ns/op")
	if err != nil {
		return 0, "", err
	}
	bare, _ := r.Get("BenchmarkRunSandboxed/unconfined", "ns/op")
	return ns / 1e6, fmt.Sprintf("%s, unconfined %s, best of %d runs", ms(time.Duration(ns)), ms(time.Duration(bare)), e.Rounds(3)), nil
}

func measureParse(e *Env) (float64, string, error) {
	r, err := e.GoBench("./internal/protocol", "^BenchmarkParse$/^ordinary$", "3x", e.Rounds(3))
	if err != nil {
		return 0, "", err
	}
	ns, err := r.Get("BenchmarkParse/ordinary", "ns/op")
	if err != nil {
		return 0, "", err
	}
	return ns / 1e9, fmt.Sprintf("%s, best of %d runs", ms(time.Duration(ns)), e.Rounds(3)), nil
}

// measureAdversarial takes the worst of the adversarial inputs, each
// timed against the ordinary reply in alternation (BenchmarkParseRatio),
// so that a busy moment of the machine slows both sides of a ratio.
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

// measureResident runs 'courier process' on a reply just under the 20 MB
// limit holding one CREATE_FILE, and compares the process's peak resident
// memory with the reply's size.
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

// courier runs courier in root, its output kept for an error.
func courier(e *Env, bin, root string, args ...string) error {
	cmd := exec.CommandContext(e.Ctx, bin, append([]string{"--root", root, "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("courier %s: %w\n%s", strings.Join(args, " "), err, tail(out))
	}
	return nil
}

func measureReadFile(e *Env) (float64, string, error) {
	r, err := e.GoBench("./internal/runner", "^BenchmarkReadFileLarge$", "3x", 1)
	if err != nil {
		return 0, "", err
	}
	mb, err := r.Get("BenchmarkReadFileLarge", "MB-allocated")
	if err != nil {
		return 0, "", err
	}
	ns, _ := r.Get("BenchmarkReadFileLarge", "ns/op")
	return mb, fmt.Sprintf("%.2f MB allocated in %s", mb, ms(time.Duration(ns))), nil
}

func measureUndo(e *Env) (float64, string, error) {
	r, err := e.GoBench("./internal/runner", "^BenchmarkUndo$", "3x", e.Rounds(3))
	if err != nil {
		return 0, "", err
	}
	var parts []string
	for _, d := range []int{1, 50, 200} {
		v, err := r.Get(fmt.Sprintf("BenchmarkUndo/depth=%d", d), "ns/op")
		if err != nil {
			return 0, "", err
		}
		parts = append(parts, fmt.Sprintf("depth %d: %s", d, ms(time.Duration(v))))
	}
	deep, err := r.Get("BenchmarkUndo/depth=200", "ns/op")
	if err != nil {
		return 0, "", err
	}
	last, err := r.Get("BenchmarkUndo/depth=1", "ns/op")
	if err != nil {
		return 0, "", err
	}
	return deep / last, strings.Join(parts, ", "), nil
}

// goNet copies Go's src/net into the scratch folder, once per run.
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
// src/net, without the description of the machine (which waits on the
// slowest tool's --version whatever is packed), next to repomix, which
// people use to paste whole projects into a chat.
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
	// repomix writes its pack into the folder it packs: moved out after
	// each run, so that the next run packs the same files.
	out := filepath.Join(e.Dir, "repomix-output.xml")
	repomix := func() error {
		cmd := exec.CommandContext(e.Ctx, filepath.Join(dir, "node_modules", ".bin", "repomix"))
		cmd.Dir = tree
		if o, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("repomix: %w\n%s", err, tail(o))
		}
		return os.Rename(filepath.Join(tree, "repomix-output.xml"), out)
	}
	tc, tr, err := SideBySide(e, e.Rounds(3), pack, repomix)
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

// measureSettle runs a real 'courier watch' on a copy of Go's src/net and
// times, for replies saved the two ways a complete file appears (renamed
// into inbox/ as browsers and editors save, or written in place and
// closed), the time from the save to the next request's file in outbox/.
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

	watch := exec.CommandContext(e.Ctx, bin, "--root", root, "watch", id)
	watch.Env = append(os.Environ(), "NO_COLOR=1")
	log := filepath.Join(root, "watch.log")
	out, err := os.Create(log)
	if err != nil {
		return 0, "", err
	}
	defer out.Close()
	watch.Stdout, watch.Stderr = out, out
	if err := watch.Start(); err != nil {
		return 0, "", fmt.Errorf("courier watch: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- watch.Wait() }()
	defer func() {
		watch.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			watch.Process.Kill()
			<-exited
		}
	}()

	seq := 1
	// turn saves the reply to the current request as save says, and
	// returns the time from the save to the next request's file.
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
		p50 := percentile(lat, 50)
		worst = max(worst, float64(p50)/float64(time.Millisecond))
		parts = append(parts, fmt.Sprintf("%s p50 %s (max %s)", how.name, ms(p50), ms(slices.Max(lat))))
	}
	return worst, strings.Join(parts, ", ") + fmt.Sprintf(" over %d replies each", rounds), nil
}
