// Package xvfbtest gives tests a real X display, so clipboard code can be
// tested against real X clipboard tools without touching the clipboard of
// the person running the tests.
package xvfbtest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// skipEnv, set to "1", lets tests skip on a machine with no X server and
// no Xvfb, instead of failing.
const skipEnv = "COURIER_TEST_NO_CLIPBOARD"

// startLimit bounds the wait for a hung Xvfb.
const startLimit = 20 * time.Second

// Display returns the name (":N") of a private Xvfb's display, stopped
// when t ends, or else $DISPLAY. With neither, t fails saying what to
// install, or is skipped when skipEnv is "1". Xvfb runs with -displayfd:
// it picks a free display and reports it once it accepts connections.
func Display(t testing.TB) string {
	t.Helper()
	xvfb, err := exec.LookPath("Xvfb")
	if err != nil {
		if d := os.Getenv("DISPLAY"); d != "" {
			return d
		}
		Unavailable(t, "no X display: DISPLAY is unset and Xvfb is not installed")
	}
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

	r.SetReadDeadline(time.Now().Add(startLimit))
	line, err := bufio.NewReader(r).ReadString('\n')
	if n := strings.TrimSpace(line); n != "" {
		return ":" + n
	}
	stop(cmd)
	t.Fatalf("Xvfb reported no display within %s (%v): %s", startLimit, err, stderr.String())
	return ""
}

// stop asks Xvfb to exit, removing its lock file and socket, and kills it
// if it does not. X clients serving the clipboard exit with it.
func stop(cmd *exec.Cmd) {
	if cmd.ProcessState == nil {
		cmd.Process.Signal(os.Interrupt)
		defer time.AfterFunc(5*time.Second, func() { cmd.Process.Kill() }).Stop()
		cmd.Wait()
	}
}

// Unavailable ends t because a clipboard dependency is missing: it fails
// with the install command, or skips when skipEnv is "1".
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(skipEnv) == "1" {
		t.Skipf("%s (%s=1)", why, skipEnv)
	}
	t.Fatalf("%s; install the clipboard test tools (apt-get install -y xvfb xclip xsel) or set %s=1 to skip", why, skipEnv)
}
