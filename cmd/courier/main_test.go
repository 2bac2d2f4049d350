package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/courier-agent/courier/internal/agent/agenttest"

	"github.com/courier-agent/courier/internal/clipboard/xvfbtest"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// TestMain lets the test binary act as the courier binary in scripts, so
// the end-to-end tests run the real program on real folders and shells.
func TestMain(m *testing.M) {
	// The command sandbox re-runs the executable itself, which in tests is
	// this binary under its own name.
	sandboxtest.RunLauncher()
	// courier keeps a list of the person's roots in their state folder;
	// the tests' roots go to a folder of their own. Not in the courier the
	// scripts run (this binary under courier's name), whose environment is
	// the script's.
	if filepath.Base(os.Args[0]) != "courier" && os.Getenv("XDG_STATE_HOME") == "" {
		state, err := os.MkdirTemp("", "courier-test-state-")
		if err != nil {
			panic(err)
		}
		os.Setenv("XDG_STATE_HOME", state)
	}
	testscript.Main(m, map[string]func(){
		"courier": main,
		// courier where nothing can confine commands, as on Windows and
		// macOS.
		"courier-unconfined": func() {
			os.Exit(run(func(string) sandbox.Kernel { return sandbox.Kernel{Unconfined: "commands cannot be confined on plan9"} }))
		},
	})
}

// TestScripts runs the end-to-end scripts in testdata/script. OUTSIDE is a
// folder sandboxed commands must not be able to write to; fakellm, the
// program that plays the LLM for the agent scripts, is on PATH.
func TestScripts(t *testing.T) {
	// A fakellm built beforehand serves where the source tree is not at
	// hand (the sandbox tests run again as another user from a copy).
	fakellm := os.Getenv("COURIER_TEST_FAKELLM")
	if fakellm == "" {
		var err error
		if fakellm, err = agenttest.BuildFakeLLM(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	testscript.Run(t, scriptParams("testdata/script", []string{
		"OUTSIDE=" + sandboxtest.OutsideDir(t),
		"PATH=" + filepath.Dir(fakellm) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}))
}

// TestRenderedCorpus reads with 'courier parse --json' the replies in
// testdata/rendered, each as a chat page gives it when the person selects
// the answer on the page and copies it, and checks what courier reads.
func TestRenderedCorpus(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/rendered", nil))
}

// TestClipboardScripts runs the scripts that use a real X clipboard, each
// on a private Xvfb display of its own, since scripts run in parallel and
// share nothing (xclip and Xvfb are installed by .ci/run).
func TestClipboardScripts(t *testing.T) {
	if _, err := exec.LookPath("xclip"); err != nil {
		xvfbtest.Unavailable(t, "xclip is not installed")
	}
	scripts, err := filepath.Glob("testdata/clipboard/*.txtar")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no clipboard scripts: %v", err)
	}
	displays := map[string]string{}
	for _, s := range scripts {
		displays[strings.TrimSuffix(filepath.Base(s), ".txtar")] = xvfbtest.Display(t)
	}
	params := scriptParams("testdata/clipboard", nil)
	setup := params.Setup
	params.Setup = func(e *testscript.Env) error {
		// testscript names each work folder "script-NAME".
		name := strings.TrimPrefix(filepath.Base(e.WorkDir), "script-")
		d, ok := displays[name]
		if !ok {
			return fmt.Errorf("no display for script %q", name)
		}
		e.Setenv("DISPLAY", d)
		return setup(e)
	}
	testscript.Run(t, params)
}

// scriptParams are the settings of every script run: a fresh root per
// script and courier's own helper commands.
func scriptParams(dir string, env []string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Condition:           scriptCondition,
		Setup: func(e *testscript.Env) error {
			// Every script starts in its own root, as a person running
			// courier in a fresh clone would.
			e.Setenv("COURIER_ROOT", e.WorkDir)
			e.Setenv("NO_COLOR", "1")
			// courier's list of the person's roots, kept out of the
			// home folders the scripts compare.
			e.Setenv("XDG_STATE_HOME", filepath.Join(e.WorkDir, ".state"))
			// Agent programs run in folders under the person's cache
			// folder, and the scripts' HOME is none.
			e.Setenv("XDG_CACHE_HOME", filepath.Join(e.WorkDir, ".cache"))
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				e.Setenv(k, v)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile":   cmdWaitFile,
			"chunked":    cmdChunked,
			"subst":      cmdSubst,
			"sessionid":  cmdSessionID,
			"within":     cmdWithin,
			"exits":      cmdExits,
			"countfiles": cmdCountFiles,
			"chatserver": cmdChatServer,
			"treelist":   cmdTreeList,
			"steps":      cmdSteps,
			// attacks on the sandbox (attack_test.go)
			"stopsgrowing": cmdStopsGrowing,
			"noproc":       cmdNoProc,
			"listen":       cmdListen,
			"nowhere":      cmdNowhere,
		},
	}
}

// waitfile [-timeout D] PATH... waits until every PATH (a glob) exists (a hang
// guard for background commands, not a speed check).
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	timeout := 30 * time.Second
	if len(args) >= 2 && args[0] == "-timeout" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		timeout, args = d, args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: waitfile [-timeout D] PATH...")
	}
	deadline := time.Now().Add(timeout)
	for _, a := range args {
		p := ts.MkAbs(a)
		for {
			if m, _ := filepath.Glob(p); len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				if neg {
					return
				}
				ts.Fatalf("%s did not appear within %s", a, timeout)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if neg {
		ts.Fatalf("%v appeared", args)
	}
}

// chunked SRC DST PAUSE writes SRC into DST in two halves with a pause
// between them, as a browser or editor saving slowly would.
func cmdChunked(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: chunked SRC DST PAUSE")
	}
	data := []byte(ts.ReadFile(args[0]))
	pause, err := time.ParseDuration(args[2])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[1]))
	ts.Check(err)
	defer f.Close()
	half := len(data) / 2
	_, err = f.Write(data[:half])
	ts.Check(err)
	ts.Check(f.Sync())
	time.Sleep(pause)
	_, err = f.Write(data[half:])
	ts.Check(err)
}

// subst SRC DST copies SRC to DST with $VAR and ${VAR} replaced by the
// script's environment, so replies can name the session id.
func cmdSubst(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: subst SRC DST")
	}
	out := os.Expand(ts.ReadFile(args[0]), func(name string) string {
		if v := ts.Getenv(name); v != "" {
			return v
		}
		return "$" + name
	})
	// Write through a temporary name so a watching courier never sees half.
	dst := ts.MkAbs(args[1])
	tmp := filepath.Join(filepath.Dir(dst), ".subst-"+filepath.Base(dst))
	ts.Check(os.WriteFile(tmp, []byte(out), 0o644))
	ts.Check(os.Rename(tmp, dst))
}

// sessionid VAR [N] sets VAR to the id of the session listed Nth (1-based,
// newest first) in sessions/.
func cmdSessionID(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: sessionid VAR [N]")
	}
	entries, err := os.ReadDir(ts.MkAbs("sessions"))
	ts.Check(err)
	type s struct {
		id  string
		mod time.Time
	}
	var ids []s
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			info, err := e.Info()
			ts.Check(err)
			ids = append(ids, s{id, info.ModTime()})
		}
	}
	if len(ids) == 0 {
		ts.Fatalf("no session in sessions/")
	}
	n := 1
	if len(args) > 1 {
		fmt.Sscan(args[1], &n)
	}
	// Oldest first by creation order of the files' names is not defined;
	// sort by modification time, newest first.
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if ids[j].mod.After(ids[i].mod) {
				ids[i], ids[j] = ids[j], ids[i]
			}
		}
	}
	ts.Setenv(args[0], ids[n-1].id)
}

// within D PROG ARGS... runs a program and fails if it has not finished
// within D: a guard against hangs (a command waiting for an orphaned
// grandchild), with a wide margin, not a speed measurement.
func cmdWithin(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: within D PROG ARGS...")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	done := make(chan error, 1)
	go func() { done <- ts.Exec(args[1], args[2:]...) }()
	select {
	case err := <-done:
		if err != nil && !neg {
			ts.Fatalf("%v", err)
		}
		if err == nil && neg {
			ts.Fatalf("unexpected success")
		}
	case <-time.After(d):
		ts.Fatalf("%s did not finish within %s", args[1], d)
	}
}

// exits CODE PROG ARGS... runs a program that must end with exit status
// CODE; its output can be checked afterwards as usual.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: exits CODE PROG ARGS...")
	}
	err := ts.Exec(args[1], args[2:]...)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%v", err)
	}
	if fmt.Sprint(code) != args[0] {
		ts.Fatalf("%s exited with %d, want %s", args[1], code, args[0])
	}
}

// countfiles DIR N checks that DIR holds exactly N entries whose names do
// not start with ".", e.g. no outbox written twice.
func cmdCountFiles(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: countfiles DIR N")
	}
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	var names bytes.Buffer
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			n++
			names.WriteString(e.Name() + " ")
		}
	}
	if fmt.Sprint(n) != args[1] {
		ts.Fatalf("%s holds %d files (%s), want %s", args[0], n, names.String(), args[1])
	}
}

// chatserver STEPS VAR starts an OpenAI-compatible chat-completions server
// answering request n with the nth step of the JSON array in STEPS (see
// agenttest.Step) and sets VAR to its base URL; it stops with the script.
func cmdChatServer(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: chatserver STEPS VAR")
	}
	var steps []agenttest.Step
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &steps))
	logf := func(format string, a ...any) { ts.Logf(format, a...) }
	srv := agenttest.StartChatServer(agenttest.Steps(steps, logf), logf)
	ts.Defer(srv.Close)
	ts.Setenv(args[1], srv.URL)
}

// steps VAR... sets each VAR, in order, to the next steps the last command
// printed: the 'courier ...' texts in quotes in its stdout, then stderr.
func cmdSteps(ts *testscript.TestScript, neg bool, args []string) {
	text := ts.ReadFile("stdout") + ts.ReadFile("stderr")
	found := regexp.MustCompile(`'([^' ]*courier [^']*)'`).FindAllStringSubmatch(text, -1)
	if len(found) < len(args) {
		ts.Fatalf("%d steps printed, want %d:\n%s", len(found), len(args), text)
	}
	for i, name := range args {
		ts.Setenv(name, found[i][1])
	}
}
