// Package agenttest gives tests of courier's agent backends real
// counterparts to run against: fakellm, a program built from source that
// plays the LLM behind the command backend (see the fakellm command for
// its settings), and ChatServer, an HTTP server speaking the
// chat-completions protocol from a script, failures included.
package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const fakellmPackage = "github.com/courier-agent/courier/internal/agent/agenttest/fakellm"

// BuildFakeLLM builds fakellm into dir, once per test package (TestMain),
// and returns its path.
func BuildFakeLLM(dir string) (string, error) {
	goTool := "go"
	if p, err := exec.LookPath("go"); err == nil {
		goTool = p
	} else if root := os.Getenv("GOROOT"); root != "" {
		goTool = filepath.Join(root, "bin", "go")
	}
	out := filepath.Join(dir, "fakellm")
	if msg, err := exec.Command(goTool, "build", "-o", out, fakellmPackage).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build fakellm: %w\n%s", err, msg)
	}
	return out, nil
}

// Install puts fakellm in a new folder, to be put first on PATH, under
// the name of the program it stands for (claude, codex...).
func Install(t testing.TB, fakellm, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(fakellm, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return dir
}
