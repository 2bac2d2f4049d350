package atomicfile_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/courier-agent/courier/internal/atomicfile"
)

// roDirEnv tells a re-executed test binary to check Write in this folder,
// mounted read-only in the child's own mount namespace.
const roDirEnv = "ATOMICFILE_TEST_READONLY_DIR"

// roDone is what the child prints once its checks have really run.
const roDone = "read-only check done"

// TestWriteInReadOnlyFolder checks that Write fails, leaving the old file
// and no temporary file, in a folder it may not write. Root ignores
// permission bits, so as root the folder is made read-only by a read-only
// bind mount in a child process's private mount namespace, where even root
// gets EROFS; otherwise the folder is simply chmod 0555.
func TestWriteInReadOnlyFolder(t *testing.T) {
	if dir := os.Getenv(roDirEnv); dir != "" {
		readOnlyChild(t, dir)
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		err := atomicfile.Write(p, []byte("new"), 0o644)
		if !errors.Is(err, os.ErrPermission) {
			t.Errorf("Write in a 0555 folder = %v, want permission denied", err)
		}
	} else {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriteInReadOnlyFolder$", "-test.v")
		cmd.Env = append(os.Environ(), roDirEnv+"="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), roDone) {
			t.Fatalf("read-only child: %v\n%s", err, out)
		}
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("file now %q", got)
	}
	if left := temps(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// readOnlyChild runs in the re-executed binary: it mounts dir read-only in
// its own namespace and checks that Write fails with EROFS.
func readOnlyChild(t *testing.T, dir string) {
	// Private first, so the read-only mount never propagates to the host.
	if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		t.Fatalf("make mounts private: %v", err)
	}
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s: %v", dir, err)
	}
	if err := syscall.Mount(dir, dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", dir, err)
	}
	err := atomicfile.Write(filepath.Join(dir, "state.json"), []byte("new"), 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Fatalf("Write on a read-only mount = %v, want EROFS", err)
	}
	if !strings.Contains(err.Error(), "state.json") {
		t.Errorf("error %q does not name the file", err)
	}
	t.Log(roDone)
}
