package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module writes a Go module of the given files into a new folder.
func module(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.21\n"
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goTest runs testreport over the real go test -json in dir.
func goTest(t *testing.T, dir string, args ...string) (code int, out string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is not on PATH: %v", err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var stdout, stderr bytes.Buffer
	code = run(append([]string{gobin, "test", "-json", "-count=1"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}

func TestReportShowsSkipsAndFailures(t *testing.T) {
	dir := module(t, map[string]string{
		"good/good_test.go": `package good
import "testing"
func TestPass(t *testing.T) { t.Log("quiet when it passes") }
func TestNeedsWidget(t *testing.T) { t.Skip("NOT RUN: widget is not on PATH") }
// A testscript script logs its whole run, then the skip that stopped it.
func TestScripts(t *testing.T) {
	t.Run("attack_x", func(t *testing.T) {
		t.Log("# the attack\n> exec true\n> [!root] skip 'NOT RUN: needs root'\n")
		t.SkipNow()
	})
}
`,
		"bad/bad_test.go": `package bad
import "testing"
func TestOK(t *testing.T) {}
func TestWrong(t *testing.T) { t.Log("first we tried"); t.Error("wrong answer 42") }
func TestParent(t *testing.T) {
	t.Run("child", func(t *testing.T) { t.Fatal("the child broke") })
}
`,
		"none/none.go": "package none\n",
	})
	code, out := goTest(t, dir, "./...")
	if code != 1 {
		t.Errorf("exit code %d, want 1 for a failing test", code)
	}
	for _, want := range []string{
		"ok    example.com/m/good  ",
		"2 passed, 2 skipped",
		"      SKIP TestNeedsWidget: NOT RUN: widget is not on PATH\n",
		"      SKIP TestScripts/attack_x: [!root] skip 'NOT RUN: needs root'\n",
		"FAIL  example.com/m/bad  ",
		"1 passed, 3 failed",
		"--- output of TestWrong:\n",
		"first we tried",
		"wrong answer 42",
		"--- output of TestParent/child:\n",
		"the child broke",
		"?     example.com/m/none  (no tests)\n",
		"3 packages: 3 tests passed, 2 skipped, 3 failed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"quiet when it passes", "--- output of TestParent:", "--- output of TestOK"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("report holds %q:\n%s", unwanted, out)
		}
	}
}

func TestReportPasses(t *testing.T) {
	dir := module(t, map[string]string{
		"a/a_test.go": "package a\nimport \"testing\"\nfunc TestA(t *testing.T) {}\n",
	})
	code, out := goTest(t, dir, "./...")
	if code != 0 {
		t.Errorf("exit code %d, want 0:\n%s", code, out)
	}
	if !strings.Contains(out, "ok    example.com/m/a  ") || strings.Contains(out, "SKIP") {
		t.Errorf("report:\n%s", out)
	}
}

// Failures outside any test fail the run too, with what was printed.
func TestReportFailuresOutsideTests(t *testing.T) {
	dir := module(t, map[string]string{
		"broken/broken.go":      "package broken\nfunc F() int { return \"not an int\" }\n",
		"broken/broken_test.go": "package broken\nimport \"testing\"\nfunc TestF(t *testing.T) { F() }\n",
		"crash/crash_test.go": `package crash
import ("os"; "testing")
func TestMain(m *testing.M) { println("setup went wrong"); os.Exit(4) }
`,
	})
	code, out := goTest(t, dir, "./...")
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	for _, want := range []string{"FAIL  example.com/m/broken", "not an int", "FAIL  example.com/m/crash", "setup went wrong"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// A command that fails before printing any event.
	if code, out := goTest(t, dir, "-timeout=soon", "./..."); code != 1 || !strings.Contains(out, "soon") {
		t.Errorf("exit code %d, want 1, and the command's error:\n%s", code, out)
	}
}
