// Package xvfbtest gives tests a real X display, so clipboard code can be
// tested against real X clipboard tools without touching the clipboard of
// the person running the tests.
package xvfbtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// SkipEnv, set to "1", lets tests skip (saying why) on a machine with no X
// server and no Xvfb, instead of failing.
const SkipEnv = "COURIER_TEST_NO_CLIPBOARD"

// Install names the Debian packages the clipboard tests need.
const Install = "apt-get install -y xvfb xclip xsel"

// startLimit bounds the wait for Xvfb to come up; it guards against a hung
// server, it is not a speed requirement.
const startLimit = 20 * time.Second

// Display returns the name (":N") of an X display for t. It starts a
// private Xvfb on a free display number, stopped when t ends; if Xvfb is
// not installed it falls back to $DISPLAY. With neither, t fails saying
// what to install, or is skipped when SkipEnv is "1".
func Display(t testing.TB) string {
	t.Helper()
	xvfb, err := exec.LookPath("Xvfb")
	if err != nil {
		if d := os.Getenv("DISPLAY"); d != "" {
			return d
		}
		Unavailable(t, "no X display: DISPLAY is unset and Xvfb is not installed")
	}
	return start(t, xvfb)
}

// Unavailable ends t because a clipboard dependency is missing: it fails
// with the install command, or skips when SkipEnv is "1".
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skipf("%s (%s=1)", why, SkipEnv)
	}
	t.Fatalf("%s; install the clipboard test tools (%s) or set %s=1 to skip", why, Install, SkipEnv)
}

// start runs Xvfb with -displayfd, which makes the server pick a free
// display number and report it once it accepts connections, so there is
// neither guessing of numbers nor polling for readiness.
func start(t testing.TB, xvfb string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	defer r.Close()
	var stderr bytes.Buffer
	// -noreset: by default the server resets when its last client leaves
	// (an xsel that served an empty copy and exited), and a client
	// connecting during the reset is refused.
	cmd := exec.Command(xvfb, "-displayfd", "3", "-nolisten", "tcp", "-noreset")
	cmd.ExtraFiles = []*os.File{w} // becomes fd 3
	cmd.Stderr = &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	t.Cleanup(func() { stop(cmd) })

	number := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		number <- strings.TrimSpace(line)
	}()
	select {
	case n := <-number:
		if n == "" {
			stop(cmd)
			t.Fatalf("Xvfb exited without a display: %s", stderr.String())
		}
		return ":" + n
	case <-time.After(startLimit):
		stop(cmd)
		t.Fatalf("Xvfb reported no display within %s: %s", startLimit, stderr.String())
		return ""
	}
}

// stop asks Xvfb to exit, so it removes its lock file and socket, and kills
// it if it does not. X clients serving the clipboard exit with it.
func stop(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// Env returns os.Environ() with the display set to display and any Wayland
// display removed, so clipboard tools talk to that X server.
func Env(display string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, fmt.Sprintf("DISPLAY=%s", display))
}
