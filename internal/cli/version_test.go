package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// 'courier --version' of a binary 'make build' made names the commit it
// was built from, whatever go's own VCS stamping does: none here with
// GOFLAGS=-buildvcs=false, nor ever in a git worktree.
func TestMakeBuildNamesTheCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "courier")
	// With cgo as the test itself was built, so that the build reuses
	// the packages compiled for it: the stamp is what is tested.
	build := exec.Command("make", "-C", filepath.Join("..", ".."), "build", "BIN="+bin, "STATIC=")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "courier " + strings.TrimSpace(string(head)); !strings.HasPrefix(string(out), want) {
		t.Errorf("--version = %q, want it to start with %q", out, want)
	}
}
