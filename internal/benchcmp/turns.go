package benchcmp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The writing side of a turn: how soon a saved reply is taken, what
// durability costs, undo far back, the session's state, and snapshots
// next to git.

func turnRows() []Row {
	return []Row{
		{
			What: "reply saved -> next request written (courier watch, Go's src/net)", Goal: "p50 ≤ 50 ms, renamed or closed in place", Limit: 50, Unit: "ms",
			Measure: measureSettle,
		},
		{
			What: "a turn of 100 CREATE_FILE (courier process)", Goal: "≤ 2× the same build without fsync", Limit: 2, Unit: "×",
			Measure: measureFsync,
		},
		{
			What: "undo of a turn 200 turns back", Goal: "constant: ≤ 2× the undo of the last turn", Limit: 2, Unit: "×",
			Measure: func(e *Env) (float64, string, error) {
				r, err := e.GoBenchBest("./internal/runner", "^BenchmarkUndo$", "3x", e.Rounds(3))
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
				v, _, err := ratioOf(r, "BenchmarkUndo/depth=200", "BenchmarkUndo/depth=1")
				return v, strings.Join(parts, ", "), err
			},
		},
		{
			What: "session state file over 300 turns", Goal: "constant: ≤ 1 byte more a turn", Limit: 1, Unit: "B",
			Measure: func(e *Env) (float64, string, error) {
				r, err := e.GoBench("./internal/runner", "^BenchmarkSessionState$", "300x")
				if err != nil {
					return 0, "", err
				}
				grow, err := r.Get("BenchmarkSessionState", "state-bytes/turn")
				if err != nil {
					return 0, "", err
				}
				size, _ := r.Get("BenchmarkSessionState", "state-bytes")
				return grow, fmt.Sprintf("%.0f bytes after 300 turns, %.3f more a turn", size, grow), nil
			},
		},
		{
			What: "snapshot of a command's change (20 of 10,000 files)", Goal: "for comparison: ÷ git add -A && git stash", Info: true, Unit: "×",
			Measure: func(e *Env) (float64, string, error) {
				r, err := e.GoBenchBest("./internal/history", "^BenchmarkVersusGit$", "3x", e.Rounds(3))
				if err != nil {
					return 0, "", err
				}
				v, detail, err := ratioOf(r, "BenchmarkVersusGit/change/courier", "BenchmarkVersusGit/change/git")
				if err != nil {
					return 0, "", err
				}
				if f, fd, err := ratioOf(r, "BenchmarkVersusGit/first/courier", "BenchmarkVersusGit/first/git"); err == nil {
					detail += fmt.Sprintf("; first snapshot %.2f× git add -A (%s)", f, fd)
				}
				return v, detail, nil
			},
		},
	}
}

// measureFsync compares a turn of 100 CREATE_FILE blocks with the build
// that never syncs (courier_nofsync, for this comparison only): the ratio
// is what durability costs.
func measureFsync(e *Env) (float64, string, error) {
	const name = "BenchmarkTurn/files=100"
	count := e.Rounds(3)
	with, err := e.GoBenchBest("./internal/runner", "^BenchmarkTurn$/^files=100$", "3x", count)
	if err != nil {
		return 0, "", err
	}
	without, err := e.GoBenchTagged("courier_nofsync", "./internal/runner", "^BenchmarkTurn$/^files=100$", "3x", count)
	if err != nil {
		return 0, "", err
	}
	a, err := with.Get(name, "ns/op")
	if err != nil {
		return 0, "", err
	}
	b, err := without.Get(name, "ns/op")
	if err != nil {
		return 0, "", err
	}
	mem, _ := with.Get(name, "B/op")
	return a / b, fmt.Sprintf("%s vs %s without fsync; %.1f MB allocated a turn", ms(time.Duration(a)), ms(time.Duration(b)), mem/(1<<20)), nil
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
	tree, err := goTree(e, "net")
	if err != nil {
		return 0, "", err
	}
	root, err := os.MkdirTemp(e.Dir, "settle-")
	if err != nil {
		return 0, "", err
	}
	env := append(os.Environ(), "NO_COLOR=1")
	newCmd := exec.CommandContext(e.Ctx, bin, "--root", root, "--workspace", tree, "--environment=false", "--quiet", "new", "--no-watch", "settle")
	newCmd.Env = env
	if out, err := newCmd.CombinedOutput(); err != nil {
		return 0, "", fmt.Errorf("courier new: %w\n%s", err, tail(out))
	}
	first, err := filepath.Glob(filepath.Join(root, "outbox", "*_seq0001.txt"))
	if err != nil || len(first) != 1 {
		return 0, "", fmt.Errorf("no first request in %s", root)
	}
	id := strings.TrimSuffix(filepath.Base(first[0]), "_seq0001.txt")

	watch := exec.CommandContext(e.Ctx, bin, "--root", root, "watch", id)
	watch.Env = env
	var out bytes.Buffer
	watch.Stdout, watch.Stderr = &out, &out
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
				return 0, fmt.Errorf("courier watch ended: %v\n%s", err, tail(out.Bytes()))
			case <-e.Ctx.Done():
				return 0, e.Ctx.Err()
			case <-time.After(time.Millisecond):
			}
			if time.Since(start) > time.Minute {
				return 0, fmt.Errorf("no request %d a minute after the reply\n%s", seq+1, tail(out.Bytes()))
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
	if worst == 0 {
		return 0, "", errors.New("no reply timed")
	}
	return worst, strings.Join(parts, ", ") + fmt.Sprintf(" over %d replies each", rounds), nil
}
