//go:build unix

package clipboard

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/courier-agent/courier/internal/clipboard/xvfbtest"
)

// TestCopyOutlivesCopier copies from a separate process (this test binary
// run again) that then exits, as courier does after --copy. The text must
// still paste, also after a Ctrl-C reaches the copier's whole process
// group, as it would in the terminal courier ran in.
func TestCopyOutlivesCopier(t *testing.T) {
	display := xvfbtest.Display(t)
	for _, tool := range xTools {
		t.Run(tool, func(t *testing.T) {
			env := toolEnv(t, display, tool)
			text := "outbox for " + tool + "\nsurvives ✓\n"
			file := filepath.Join(t.TempDir(), "text")
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(env, childCopyEnv+"="+file)
			child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr strings.Builder
			child.Stderr = &stderr
			if _, err := within(t, "copying process", func() (struct{}, error) { return struct{}{}, child.Run() }); err != nil {
				t.Fatalf("copying process: %v: %s", err, stderr.String())
			}
			// Whatever is left in the copier's group gets the Ctrl-C; the
			// group being gone already is what we hope for.
			if err := syscall.Kill(-child.Process.Pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
				t.Fatal(err)
			}
			c := detect(t, env, tool)
			got, err := pasteText(t, c)
			if err != nil || got != text {
				t.Errorf("Paste after the copier exited = %q, %v; want %q", got, err, text)
			}
		})
	}
}
