//go:build unix

package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// TestMain lets the test binary act as courier's sandbox launcher, the way
// courier's main does, when a sandboxed Run re-executes it.
func TestMain(m *testing.M) { sandboxtest.Main(m) }

func run(t *testing.T, spec Spec) Result {
	t.Helper()
	if spec.Dir == "" {
		spec.Dir = t.TempDir()
	}
	if spec.Env == nil {
		spec.Env = []string{"PATH=" + os.Getenv("PATH")}
	}
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run(%q): %v", spec.Command, err)
	}
	return res
}

func TestRunExitCodeAndOutput(t *testing.T) {
	tests := []struct {
		name     string
		command  string
		wantCode int
		want     string
	}{
		{"success", "echo hello", 0, "hello\n"},
		{"exit code", "exit 3", 3, ""},
		{"stderr captured", "echo oops >&2; exit 1", 1, "oops\n"},
		{"interleaved in order", "echo a; echo b >&2; echo c", 0, "a\nb\nc\n"},
		{"unknown program", "no-such-program-courier", 127, "not found"},
		{"killed by signal", "kill -9 $$", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, Spec{Command: tt.command, Timeout: 30 * time.Second})
			if res.ExitCode != tt.wantCode {
				t.Errorf("exit code = %d, want %d (output %q)", res.ExitCode, tt.wantCode, res.Output)
			}
			if !strings.Contains(res.Output, tt.want) || (tt.want == "" && res.Output != "") {
				t.Errorf("output = %q, want it to contain %q", res.Output, tt.want)
			}
			if res.TimedOut || res.Canceled || res.Truncated || res.Sandboxed {
				t.Errorf("unexpected flags in %+v", res)
			}
		})
	}
}

func TestRunWorkingFolder(t *testing.T) {
	dir := t.TempDir()
	res := run(t, Spec{Command: "pwd; echo x > made-here", Dir: dir})
	if got := strings.TrimSpace(res.Output); got != dir {
		t.Errorf("pwd = %q, want %q", got, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "made-here")); err != nil {
		t.Errorf("file written by the command is not in the working folder: %v", err)
	}
}

func TestRunHasNoStdin(t *testing.T) {
	// With a terminal or an inherited pipe for stdin, read would wait until
	// the timeout; /dev/null gives end of file at once.
	res := run(t, Spec{Command: `read x; echo "read status $?"`, Timeout: 20 * time.Second})
	if res.TimedOut || res.Output != "read status 1\n" {
		t.Errorf("got %+v, want read to fail at end of file", res)
	}
}

func TestRunHasNoTerminal(t *testing.T) {
	// A program that prompts on /dev/tty (sudo, ssh) must fail instead of
	// waiting for the person at courier's terminal.
	res := run(t, Spec{Command: `echo hi > /dev/tty && echo opened`, Timeout: 20 * time.Second})
	if strings.Contains(res.Output, "opened") || res.ExitCode == 0 {
		t.Errorf("the command could open a terminal: %+v", res)
	}
}

func TestRunErrorsWhenNotStarted(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		dir  string
		want error
	}{
		{"relative folder", context.Background(), "relative/dir", nil},
		{"missing folder", context.Background(), filepath.Join(t.TempDir(), "missing"), syscall.ENOENT},
		{"canceled before start", canceled, t.TempDir(), context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(tt.ctx, Spec{Command: "echo hi", Dir: tt.dir})
			if err == nil {
				t.Fatal("Run succeeded, want an error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v is not %v", err, tt.want)
			}
		})
	}
}

// grandchildMarker returns shell text for a background process that writes
// marker after delay seconds unless it is killed first.
func grandchildMarker(marker string, delay int) string {
	return "(sleep " + strconv.Itoa(delay) + "; echo alive > '" + marker + "') "
}

// assertNeverWritten waits until the grandchild would have written marker,
// then checks that it did not, i.e. that it was killed.
func assertNeverWritten(t *testing.T, marker string, until time.Time) {
	t.Helper()
	time.Sleep(time.Until(until) + 500*time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("background process survived and wrote %s", marker)
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	const delay = 3 // seconds before a surviving grandchild writes its marker
	tests := []struct {
		name    string
		command func(marker string) string
	}{
		{"backgrounded grandchild", func(m string) string {
			return grandchildMarker(m, delay) + "& echo started; sleep 100"
		}},
		{"subshell detaching a child", func(m string) string {
			return "(" + grandchildMarker(m, delay) + "&); echo started; sleep 200"
		}},
		{"grandchild in its own group (GNU timeout)", func(m string) string {
			return "timeout 60 sh -c \"" + grandchildMarker(m, delay) + "\" & echo started; sleep 100"
		}},
		{"shell ignoring SIGTERM", func(m string) string {
			return "trap '' TERM; " + grandchildMarker(m, delay) + "& echo started; sleep 100; sleep 100"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			marker := filepath.Join(dir, "marker")
			start := time.Now()
			res := run(t, Spec{Command: tt.command(marker), Dir: dir, Timeout: 300 * time.Millisecond})
			if time.Since(start) >= delay*time.Second {
				t.Errorf("Run returned after %v, later than the grandchild's %ds sleep: it waited for it", time.Since(start), delay)
			}
			if !res.TimedOut || res.ExitCode != -1 || res.Canceled {
				t.Errorf("got %+v, want a timed-out result with exit code -1", res)
			}
			if res.Output != "started\n" {
				t.Errorf("output = %q, want the output printed before the timeout", res.Output)
			}
			assertNeverWritten(t, marker, start.Add(delay*time.Second))
		})
	}
}

func TestRunDoesNotWaitForBackgroundJobs(t *testing.T) {
	t.Parallel() // these wait seconds for a grandchild that must not act
	const delay = 3
	tests := []struct {
		name    string
		command func(marker string) string
	}{
		{"background job", func(m string) string {
			return grandchildMarker(m, delay) + "& echo done"
		}},
		{"background job in its own group (GNU timeout)", func(m string) string {
			// The sleep lets timeout move to its own group before the shell ends.
			return "timeout 60 sh -c \"" + grandchildMarker(m, delay) + "\" & sleep 0.5; echo done"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			marker := filepath.Join(dir, "marker")
			start := time.Now()
			res := run(t, Spec{Command: tt.command(marker), Dir: dir})
			if time.Since(start) >= delay*time.Second {
				t.Errorf("Run returned after %v: it waited for the background job", time.Since(start))
			}
			if res.ExitCode != 0 || res.Output != "done\n" || res.TimedOut {
				t.Errorf("got %+v, want a normal exit with output %q", res, "done\n")
			}
			assertNeverWritten(t, marker, start.Add(delay*time.Second))
		})
	}
}

func TestRunDoesNotWaitForEscapedDaemon(t *testing.T) {
	t.Parallel() // these wait seconds for a grandchild that must not act
	// A process that leaves the session with setsid cannot be killed with
	// the group; Run must still return instead of reading its pipe forever.
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Fatalf("this test needs setsid (util-linux): %v", err)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	res := run(t, Spec{Command: "setsid sh -c 'echo $$ > pid; exec sleep 20' & sleep 0.5; echo done", Dir: dir})
	elapsed := time.Since(start)
	if data, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if elapsed >= 20*time.Second || res.Output != "done\n" {
		t.Errorf("got %+v after %v, want output %q well before the daemon's 20s", res, elapsed, "done\n")
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, Spec{Command: "echo started; sleep 60", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) >= 60*time.Second {
		t.Errorf("Run waited for the command after ctx was canceled")
	}
	if !res.Canceled || res.TimedOut || res.ExitCode != -1 || res.Output != "started\n" {
		t.Errorf("got %+v, want a canceled result with exit code -1", res)
	}
}

func TestRunCapsOutput(t *testing.T) {
	tests := []struct {
		name      string
		command   string
		max       int
		head      string
		tail      string
		truncated bool
	}{
		{"fits", "seq 1 5", 100, "1\n2\n3\n4\n5\n", "", false},
		{"head and tail kept", "seq 1 100000", 120, "1\n2\n3\n", "99999\n100000\n", true},
		{"default cap", "seq 1 100000", 0, "1\n2\n3\n", "99999\n100000\n", true},
		{"unicode counted as characters", "i=0; while [ $i -lt 3000 ]; do printf 'é'; i=$((i+1)); done", 60, "éééé", "éééé", true},
		{"invalid UTF-8 replaced", `printf 'a\377b'`, 100, "a\uFFFDb", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, Spec{Command: tt.command, MaxOutput: tt.max, Timeout: 60 * time.Second})
			max := tt.max
			if max == 0 {
				max = DefaultMaxOutput
			}
			if n := utf8.RuneCountInString(res.Output); n > max {
				t.Errorf("output has %d characters, more than the cap %d", n, max)
			}
			if !utf8.ValidString(res.Output) {
				t.Errorf("output is not valid UTF-8: %q", res.Output)
			}
			if !strings.HasPrefix(res.Output, tt.head) || !strings.HasSuffix(res.Output, tt.tail) {
				t.Errorf("output %q does not start with %q and end with %q", res.Output, tt.head, tt.tail)
			}
			if res.Truncated != tt.truncated || strings.Contains(res.Output, "characters cut]") != tt.truncated {
				t.Errorf("truncated = %v, output %q; want truncated %v with a note", res.Truncated, res.Output, tt.truncated)
			}
		})
	}
}

func TestRunEnvironment(t *testing.T) {
	res := run(t, Spec{
		Command: "env",
		Env: []string{
			"PATH=" + os.Getenv("PATH"),
			"OPENAI_API_KEY=secret-1",
			"GITHUB_TOKEN=secret-2",
			"DATABASE_URL=postgres://u:secret-3@db/x",
			"SECRET_KEY=secret-4",
			"CI_JOB_TOKEN=kept-token",
			"PAGER=less",
			"PLAIN=not-allowed",
		},
		KeepEnv:  []string{"CI_*_TOKEN"},
		ExtraEnv: map[string]string{"FROM_COMMAND": "extra"},
	})
	for _, want := range []string{"CI_JOB_TOKEN=kept-token", "FROM_COMMAND=extra", "PAGER=cat", "GIT_TERMINAL_PROMPT=0", "CI=true"} {
		if !strings.Contains(res.Output, want+"\n") {
			t.Errorf("environment lacks %s:\n%s", want, res.Output)
		}
	}
	for _, secret := range []string{"secret-1", "secret-2", "secret-3", "secret-4", "PAGER=less", "not-allowed"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("environment contains %s:\n%s", secret, res.Output)
		}
	}
}

// With Split, stdout and stderr come back apart, each capped on its own; a
// command that fills one stream while the other stays quiet does not stall.
func TestRunSplitOutput(t *testing.T) {
	res := run(t, Spec{Command: "echo out1; echo err1 >&2; echo out2; echo err2 >&2; exit 4", Split: true, Timeout: 30 * time.Second})
	if res.Stdout != "out1\nout2\n" || res.Stderr != "err1\nerr2\n" || res.Output != "" || res.ExitCode != 4 {
		t.Errorf("split run gave stdout %q, stderr %q, output %q, exit %d", res.Stdout, res.Stderr, res.Output, res.ExitCode)
	}
	res = run(t, Spec{Command: "head -c 3000000 /dev/zero | tr '\\0' e >&2; echo done", Split: true, MaxOutput: 1000, Timeout: 30 * time.Second})
	if res.Stdout != "done\n" || !res.Truncated || len(res.Stderr) > 1200 || !strings.HasPrefix(res.Stderr, "eee") {
		t.Errorf("a flood of stderr: stdout %q, stderr %d bytes, truncated %v", res.Stdout, len(res.Stderr), res.Truncated)
	}
}

// TestRunEndlessOutput plays a command that prints without end, as fast
// as it can, to exhaust courier's memory: it is stopped at its time limit,
// what comes back is within the cap, and courier's heap has not grown with
// the gigabytes that went through the pipe.
func TestRunEndlessOutput(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := run(t, Spec{Command: "yes 'flooding courier with output'", MaxOutput: 1000, Timeout: 2 * time.Second})
	runtime.GC()
	runtime.ReadMemStats(&after)
	if !res.TimedOut || !res.Truncated {
		t.Errorf("the endless command: timed out %v, output cut %v", res.TimedOut, res.Truncated)
	}
	if n := utf8.RuneCountInString(res.Output); n > 1200 {
		t.Errorf("%d characters of output came back, the cap is 1000", n)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("courier's heap grew by %d bytes while the output flowed", grew)
	}
}

// TestRunDoesNotReadFloodingDaemon plays a process that leaves the session
// and prints without end into the output pipe, to keep Run reading for
// ever: Run still returns soon after the shell ends, and no file
// descriptor of the pipes stays open in courier.
func TestRunDoesNotReadFloodingDaemon(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Fatalf("this test needs setsid (util-linux): %v", err)
	}
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("skipped: counting open descriptors needs /proc: %v", err)
		}
		return len(entries)
	}
	before := fds()
	dir := t.TempDir()
	start := time.Now()
	res := run(t, Spec{Command: "setsid sh -c 'echo $$ > pid; exec yes flood' & sleep 0.5; echo done", Dir: dir, MaxOutput: 1000})
	elapsed := time.Since(start)
	if data, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if elapsed >= 10*time.Second {
		t.Errorf("Run returned after %v while an escaped process flooded its pipe", elapsed)
	}
	if n := utf8.RuneCountInString(res.Output); n > 1000 || !strings.Contains(res.Output, "flood") {
		t.Errorf("output of %d characters: %.200q", n, res.Output)
	}
	if after := fds(); after > before {
		t.Errorf("courier holds %d more open descriptors after the command", after-before)
	}
}

// TestRunCountsBurstExactly runs a command printing 50 MB in the small
// writes of a pipeline, then a last line: every character is counted and
// the last line comes back whole, however the reads were grouped.
func TestRunCountsBurstExactly(t *testing.T) {
	const size = 50_000_000
	res := run(t, Spec{Command: fmt.Sprintf("yes abcdefghi | head -c %d; echo THE-END", size), MaxOutput: 100, Timeout: time.Minute})
	if !strings.HasPrefix(res.Output, "abcdefghi\n") || !strings.HasSuffix(res.Output, "THE-END\n") {
		t.Fatalf("output %q does not keep the first and the last line", res.Output)
	}
	kept := utf8.RuneCountInString(res.Output)
	note := regexp.MustCompile(`\n\.\.\. \[([0-9]+) characters cut\] \.\.\.\n`).FindStringSubmatch(res.Output)
	if note == nil {
		t.Fatalf("no cut note in %q", res.Output)
	}
	cut, _ := strconv.Atoi(note[1])
	total := size + len("THE-END\n")
	if got := cut + kept - utf8.RuneCountInString(note[0]); got != total {
		t.Errorf("kept %d and cut %d characters: %d in all, the command printed %d", kept, cut, got, total)
	}
}

// TestRunInheritsOnlyItsStreams plays a command that looks through its
// open descriptors for one of courier's: a file courier inherited open
// from the program that started it (here a secret, opened without
// close-on-exec as such a program leaves it), or the ends of the pipes
// courier reads the output through and stops that reading with. It finds
// stdin, stdout and stderr only, and cannot read the secret, with its
// output on one pipe or split in two.
func TestRunInheritsOnlyItsStreams(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipped: the command lists its descriptors in /proc, which only Linux has")
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("TOKEN-4b1d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	fd := held.Fd()
	if _, err := unix.FcntlInt(fd, unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	// The shell's descriptors, listed by a child that adds none of its
	// own; then the inherited one read by number.
	list := fmt.Sprintf("ls /proc/$$/fd; cat 2>/dev/null <&%d", fd)
	for _, split := range []bool{false, true} {
		res := run(t, Spec{Command: list, Split: split})
		out := res.Output + res.Stdout + res.Stderr
		if strings.Contains(out, "TOKEN-4b1d") {
			t.Errorf("split %v: the command read the secret courier holds open: %q", split, out)
		}
		if listed := res.Output + res.Stdout; listed != "0\n1\n2\n" {
			t.Errorf("split %v: the command's open descriptors: %q, want 0 1 2", split, listed)
		}
	}
}
