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

// TestToolsRunOutsideTheWorkspace runs courier's copy and paste from the
// workspace, where a reply planted a program, with a stand-in xclip that
// runs what it finds in its working folder, as a tool reading its
// settings from there would: the tools must run elsewhere.
func TestToolsRunOutsideTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	if err := os.WriteFile(filepath.Join(ws, ".hook"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	xclip := "#!/bin/sh\n[ -x .hook ] && ./.hook\ncase \"$*\" in *-in*) cat > \"$CLIP\" ;; *) cat \"$CLIP\" ;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "xclip"), []byte(xclip), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws)
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "DISPLAY=:7", "CLIP=" + filepath.Join(t.TempDir(), "clip")}
	c := detect(t, env, "xclip")
	copyText(t, c, "request")
	if got, err := pasteText(t, c); err != nil || got != "request" {
		t.Errorf("Paste = %q, %v", got, err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a clipboard tool ran the program planted in its working folder (%v)", err)
	}
}
