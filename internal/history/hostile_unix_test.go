//go:build unix

package history

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnreadableFolderAsOrdinaryUser: under an ordinary account (root
// reads everything anyway), a command empties a folder and runs "chmod
// 000" on it. The scan must still see the deletions, and undo bring the
// files back. Run as root (as CI does), the test plays the person's
// account with uid 65534.
func TestUnreadableFolderAsOrdinaryUser(t *testing.T) {
	base := t.TempDir()
	for d := base; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(base, "history.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ws, store := filepath.Join(base, "ws"), filepath.Join(base, "sessions")
	writeTree(t, ws, map[string]string{"secret/a.txt": "a\n", "secret/deep/b.txt": "b\n", "locked.txt": "locked\n"})
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildVar+"=hide", "SNAPSHOT_WS="+ws, "SNAPSHOT_STORE="+store)
	if os.Geteuid() == 0 {
		runIn(t, base, "chown -R 65534:65534 ws sessions")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	before := listing(t, ws)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "secret/a.txt (deleted)") || !strings.Contains(string(out), "locked.txt (edited, mode 0644 → 0000)") {
		t.Errorf("the changes were not seen:\n%s", out)
	}
	sameTree(t, "after undo", listing(t, ws), before)
}
