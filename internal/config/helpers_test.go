package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes a courier.toml into a fresh folder and returns its path.
func writeFile(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "courier.toml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// relative drops the folder of path from a text (an error, a source) so
// that it reads as a user in the project root would see it.
func relative(path, text string) string {
	return strings.ReplaceAll(text, filepath.Dir(path)+string(filepath.Separator), "")
}

// errText is an error's text, "<nil>" for none.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// env is a getenv over a map.
func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}
