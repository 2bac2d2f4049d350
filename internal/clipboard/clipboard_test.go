package clipboard

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/clipboard/xvfbtest"
)

// childCopyEnv makes the test binary, re-executed, copy the text in the
// named file and exit, so a test can check what outlives the copier.
const childCopyEnv = "COURIER_CLIPBOARD_TEST_COPY"

func TestMain(m *testing.M) {
	if path := os.Getenv(childCopyEnv); path != "" {
		os.Exit(copyFromFile(path))
	}
	os.Exit(m.Run())
}

func copyFromFile(path string) int {
	text, err := os.ReadFile(path)
	if err == nil {
		var c *Clipboard
		if c, err = Detect(os.Environ()); err == nil {
			err = c.Copy(string(text))
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// callLimit guards against a Copy or Paste that never returns, which is
// the failure of waiting on the clipboard server; it is not a speed check.
const callLimit = 60 * time.Second

// xEnv returns os.Environ() with DISPLAY set to display and no Wayland
// display, so clipboard tools talk to that X server.
func xEnv(display string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "WAYLAND_DISPLAY=")
	})
	return append(env, "DISPLAY="+display)
}

// toolEnv returns an environment for display whose PATH holds only the
// named tools, so Detect picks exactly that tool set.
func toolEnv(t *testing.T, display string, tools ...string) []string {
	t.Helper()
	bin := t.TempDir()
	for _, tool := range tools {
		real, err := exec.LookPath(tool)
		if err != nil {
			xvfbtest.Unavailable(t, tool+" is not installed")
		}
		if err := os.Symlink(real, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range xEnv(display) {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	// HOME too: xsel keeps a log file under it.
	return append(env, "PATH="+bin, "HOME="+t.TempDir())
}

// xTools are the X tool sets the tests run against.
var xTools = []string{"xclip", "xsel"}

func detect(t *testing.T, env []string, want string) *Clipboard {
	t.Helper()
	c, err := Detect(env)
	if err != nil {
		t.Fatalf("Detect: %v", err)
	}
	if c.b.name != want {
		t.Fatalf("Detect chose %s, want %s", c.b.name, want)
	}
	return c
}

// within runs f and fails the test if it does not return in callLimit.
func within[T any](t *testing.T, what string, f func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(callLimit):
		t.Fatalf("%s did not return within %s", what, callLimit)
		var zero T
		return zero, nil
	}
}

func copyText(t *testing.T, c *Clipboard, text string) {
	t.Helper()
	if _, err := within(t, "Copy", func() (struct{}, error) { return struct{}{}, c.Copy(text) }); err != nil {
		t.Fatalf("Copy: %v", err)
	}
}

func pasteText(t *testing.T, c *Clipboard) (string, error) {
	t.Helper()
	return within(t, "Paste", c.Paste)
}

// texts are what round trips must preserve exactly.
var texts = []struct {
	name string
	text string
}{
	{"ascii", "[DONE]all good[/DONE]"},
	{"unicode", "héllo — 日本語 ✓ 🚀 Ωmega"},
	{"multi-line", "line one\n  indented two\n\n[MESSAGE]\nhi\n[/MESSAGE]\n"},
	{"windows line ends", "a\r\nb\r\n"},
	{"surrounding blank space", "\n\n  padded  \t\n"},
	{"empty", ""},
	{"3 KB", strings.Repeat("fits in one piece\n", 3000/18)},
	{"large 1 MB", strings.Repeat("0123456789abcdef ünï\n", 1<<20/22)},
}

func TestCopyPaste(t *testing.T) {
	for _, tool := range xTools {
		t.Run(tool, func(t *testing.T) {
			c := detect(t, toolEnv(t, xvfbtest.Display(t), tool), tool)
			for _, tt := range texts {
				t.Run(tt.name, func(t *testing.T) {
					if c.b.maxCopy > 0 && len(tt.text) > c.b.maxCopy {
						if err := c.Copy(tt.text); err == nil || !strings.Contains(err.Error(), "install xclip") {
							t.Errorf("Copy of %d bytes with %s = %v, want an error advising xclip", len(tt.text), tool, err)
						}
						return
					}
					copyText(t, c, tt.text)
					got, err := pasteText(t, c)
					if tt.text == "" && errors.Is(err, ErrEmpty) {
						return
					}
					if err != nil {
						t.Fatalf("Paste: %v", err)
					}
					if got != tt.text {
						t.Errorf("Paste = %s, want %s", brief(got), brief(tt.text))
					}
				})
			}
		})
	}
}

// brief shows a text in a failure message without flooding it.
func brief(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q... (%d bytes)", s[:80], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func TestPasteEmpty(t *testing.T) {
	for _, tool := range xTools {
		t.Run(tool, func(t *testing.T) {
			c := detect(t, toolEnv(t, xvfbtest.Display(t), tool), tool)
			got, err := pasteText(t, c)
			if !errors.Is(err, ErrEmpty) {
				t.Errorf("Paste of a fresh clipboard = %q, %v; want ErrEmpty", got, err)
			}
		})
	}
}

func TestCopyLaterWins(t *testing.T) {
	for _, tool := range xTools {
		t.Run(tool, func(t *testing.T) {
			c := detect(t, toolEnv(t, xvfbtest.Display(t), tool), tool)
			for i := range 5 {
				text := fmt.Sprintf("outbox %d", i)
				copyText(t, c, text)
				if got, err := pasteText(t, c); err != nil || got != text {
					t.Fatalf("Paste after copying %q = %q, %v", text, got, err)
				}
			}
		})
	}
}

func TestUnreachableDisplay(t *testing.T) {
	for _, tool := range xTools {
		t.Run(tool, func(t *testing.T) {
			// A display number no server listens on.
			c := detect(t, toolEnv(t, ":31999", tool), tool)
			err := c.Copy("x")
			if err == nil || !strings.Contains(err.Error(), "copy with "+tool) || !strings.Contains(err.Error(), "display") {
				t.Errorf("Copy = %v, want a copy with %s error naming the display", err, tool)
			}
			if _, err := c.Paste(); err == nil || errors.Is(err, ErrEmpty) {
				t.Errorf("Paste = %v, want a paste error", err)
			}
		})
	}
}

// BenchmarkCopyPaste measures one round trip of a 64 KB outbox through
// xclip, the cost courier pays per turn with --copy and paste.
func BenchmarkCopyPaste(b *testing.B) {
	display := xvfbtest.Display(b)
	xclip, err := exec.LookPath("xclip")
	if err != nil {
		xvfbtest.Unavailable(b, "xclip is not installed")
	}
	env := append(xEnv(display), "PATH="+filepath.Dir(xclip))
	c, err := Detect(env)
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("x", 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Copy(text); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Paste(); err != nil {
			b.Fatal(err)
		}
	}
}
