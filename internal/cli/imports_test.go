package cli

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The command line builds a runner and displays what it reports: it never
// reaches past the runner into the session store, the engine, snapshots,
// the shell or atomic file writes.
func TestImportsOnlyTheRunnerAndDisplay(t *testing.T) {
	forbidden := []string{"session", "engine", "snapshot", "shell", "atomicfile"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, pkg := range forbidden {
				if path == "github.com/courier-agent/courier/internal/"+pkg {
					t.Errorf("%s imports %s: the command line must go through the runner", name, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files of the package were found")
	}
}
