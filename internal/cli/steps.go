package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The next steps courier prints ('courier watch 3f9a1c2e') are written as
// the person runs courier: the program as they started it, with the
// --root and --workspace they gave, so that each runs as printed.

// program is how the person started courier, from os.Args[0] and the
// current folder: the name found on PATH, the path they typed
// (./bin/courier), or, for a binary 'go run' built (in a go-build
// folder), 'go run ./cmd/courier' when run from the clone's top, else
// courier, which 'make install' puts on PATH.
func program(arg0, cwd string) string {
	switch {
	case arg0 == "":
		return "courier"
	case strings.Contains(filepath.ToSlash(arg0), "/go-build"):
		if _, err := os.Stat(filepath.Join(cwd, "cmd", "courier", "main.go")); err == nil {
			return "go run ./cmd/courier"
		}
		return "courier"
	}
	return shellWord(arg0)
}

// courier is the command line that starts courier again as the person
// started this one.
func (g *globals) courier() string {
	words := []string{program(g.io.Program, ".")}
	for _, f := range []struct{ flag, dir string }{{"--root", g.root}, {"--workspace", g.workspace}} {
		if f.dir == "" {
			continue
		}
		if abs, err := filepath.Abs(f.dir); err == nil {
			words = append(words, f.flag, shellWord(abs))
		}
	}
	return strings.Join(words, " ")
}

// shellWord quotes s for a POSIX shell when it needs it, in double quotes
// since the steps themselves are shown in single ones.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%") == "" {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s) + `"`
}

// stepsWriter writes text whose next steps, 'courier ...' in quotes, are
// said as the person runs courier (see courier). Text only: never a
// request, a diff or JSON.
type stepsWriter struct {
	w io.Writer
	g *globals
}

func (s stepsWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("'courier ")) {
		return s.w.Write(p)
	}
	if prog := s.g.courier(); prog != "courier" {
		if _, err := s.w.Write(bytes.ReplaceAll(p, []byte("'courier "), []byte("'"+prog+" "))); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return s.w.Write(p)
}
