package serve_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

// tab is the page open in a real headless Chromium (Debian's chromium,
// which .ci/run installs), driven with chromedp. Each step of a test
// takes a screenshot into a folder that a failing test keeps and names.
type tab struct {
	t     testing.TB
	ctx   context.Context
	shots string
	n     int
}

// openTab starts Chromium with a fresh profile and opens the page of s
// with its token, granting the page the clipboard (as the person's
// browser does on localhost once asked).
func openTab(t testing.TB, s *server) *tab {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium package): ", err)
	}
	shots, err := os.MkdirTemp("", "courier-serve-screenshots-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the screenshots of each step are kept in %s", shots)
			return
		}
		os.RemoveAll(shots)
	})
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1200, 1600))
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	tb := &tab{t: t, ctx: ctx, shots: shots}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatal(err)
	}
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: s.base})
		if err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

// step carries out the actions of one step within 20 seconds, then takes
// its screenshot.
func (tb *tab) step(name string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	err := chromedp.Do(ctx, actions...)
	tb.n++
	if png, shotErr := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100)); shotErr == nil {
		os.WriteFile(filepath.Join(tb.shots, fmt.Sprintf("%02d-%s.png", tb.n, name)), png, 0o644)
	}
	if err != nil {
		html, _ := chromedp.Run(tb.ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		tb.t.Fatalf("step %q: %v\nthe page:\n%s", name, err, html)
	}
}

// eval returns a JavaScript expression's value (awaiting a promise).
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// shows waits until the element's text holds want.
func shows(sel, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf("(document.querySelector(%q)?.textContent ?? '').includes(%q)", sel, want), chromedp.WithPollingTimeout(15*time.Second))
}

// The whole turn in the page, as a person does it: start a session, copy
// the request (read back from the browser's clipboard), paste an answer,
// review it and leave one command out, apply, see the results and the
// diff; answer an approval from the page; see an answer another courier
// applied; undo; say; finish with DONE, look at a turn's diff, and
// continue. The answers also try to run script in the page.
func TestBrowser(t *testing.T) {
	s := newServer(t)
	os.WriteFile(filepath.Join(s.cfg.Paths.Workspace, "notes.txt"), []byte("one\ntwo\n"), 0o644)
	os.MkdirAll(filepath.Join(s.cfg.Paths.Workspace, "build"), 0o755)
	os.WriteFile(filepath.Join(s.cfg.Paths.Workspace, "build", "keep.txt"), []byte("kept\n"), 0o644)
	tb := openTab(t, s)

	tb.step("sessions", chromedp.Navigate(s.base+"/?token="+s.token), chromedp.WaitVisible(chromedp.CSS("#new")))
	tb.step("start", chromedp.SendKeys(chromedp.CSS("#new textarea[name=task]"), "change notes.txt"),
		chromedp.Click(chromedp.CSS("#new button")), chromedp.WaitVisible(chromedp.CSS("#paste")), shows("#task", "change notes.txt"))
	id := strings.TrimPrefix(eval[string](tb, "location.pathname"), "/s/")

	tb.step("copy", chromedp.Click(chromedp.CSS("button.copy")), shows("button.copy", "Copied"))
	if copied := eval[string](tb, "navigator.clipboard.readText()"); !strings.Contains(copied, "=== HEADER ===") || !strings.Contains(copied, id) {
		t.Fatalf("the clipboard holds %.300q, not the request", copied)
	}

	answer := "[MESSAGE]\n<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">\n[/MESSAGE]\n\n" +
		"[EDIT_FILE path=\"notes.txt\"]\n<<<<<<< SEARCH\ntwo\n=======\nthree\n>>>>>>> REPLACE\n[/EDIT_FILE]\n\n" +
		"[RUN_COMMAND]\necho left out > skipped.txt\n[/RUN_COMMAND]\n\n" +
		"[RUN_COMMAND]\ncat notes.txt\n[/RUN_COMMAND]\n"
	tb.step("paste and review", chromedp.SetValue(chromedp.CSS("#reply"), answer), chromedp.Click(chromedp.CSS("#review-button")),
		shows("#review", "echo left out"), shows("#review .diff", "+three"))
	tb.step("apply the checked", chromedp.Click(chromedp.CSS(`#review input[name=run][value="2"]`)),
		chromedp.SendKeys(chromedp.CSS("#review input[name=reason]"), "not this one"),
		chromedp.Click(chromedp.CSS("#reviewed button")), shows("#flash", "Applied: 3 commands"),
		shows("#status .results", "cat notes.txt"), shows("#status .results", "three"), shows("#status .diff", "+three"))
	if _, err := os.Stat(filepath.Join(s.cfg.Paths.Workspace, "skipped.txt")); err == nil {
		t.Error("the command left out ran")
	}
	tb.step("the LLM is told", shows("#request-text", "not this one"), shows("#request-text", "echo left out"))

	tb.step("approval asked", chromedp.SetValue(chromedp.CSS("#reply"), "[RUN_COMMAND]\nrm -rf build\n[/RUN_COMMAND]\n"),
		chromedp.Click(chromedp.CSS("#apply")), shows("#status .question", "rm -rf build"))
	tb.step("approved", chromedp.Click(chromedp.CSS("#approve button")), shows("#flash", "Applied: 1 command"),
		shows("#status .state", "waiting"), shows("#status .results", "rm -rf build"))
	if _, err := os.Stat(filepath.Join(s.cfg.Paths.Workspace, "build")); err == nil {
		t.Error("the approved command did not run")
	}

	// Another courier applies an answer saved into inbox/: the page shows it.
	p, err := inbox.Save(s.cfg.Paths.Inbox, id, "[CREATE_FILE path=\"other.txt\"]\nfrom elsewhere\n[/CREATE_FILE]\n", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.New(s.cfg).ApplyFrom(t.Context(), &inbox.File{Path: p, Inbox: s.cfg.Paths.Inbox}, "", "courier process"); err != nil {
		t.Fatal(err)
	}
	tb.step("applied elsewhere", shows("#status .state", "request 4"), shows("#log", "other.txt"))

	tb.step("undo", chromedp.Click(chromedp.CSS("#undo button")), shows("#flash", "Undid the answer to request 3"))
	if _, err := os.Stat(filepath.Join(s.cfg.Paths.Workspace, "other.txt")); err == nil {
		t.Error("undo left other.txt")
	}
	tb.step("say", chromedp.SendKeys(chromedp.CSS("#say input[name=text]"), "keep the build folder"),
		chromedp.Click(chromedp.CSS("#say button")), shows("#flash", "copy it again"), shows("#request-text", "keep the build folder"))
	tb.step("done", chromedp.SetValue(chromedp.CSS("#reply"), "[DONE]\nnotes.txt now ends with three\n[/DONE]\n"),
		chromedp.Click(chromedp.CSS("#apply")), shows("#status", "The session is complete"), shows("#log", "request 5"))
	tb.step("a turn's diff", chromedp.Click(chromedp.CSS("#log details summary")), shows("#log .turn-diff", "+three"))
	tb.step("continue", chromedp.SendKeys(chromedp.CSS("#continue input[name=task]"), "now add four"),
		chromedp.Click(chromedp.CSS("#continue button")), shows("#request-text", "now add four"), shows("#status .state", "waiting"))
	if pwned := eval[bool](tb, "window.pwned !== undefined"); pwned {
		t.Error("a reply ran script in the page")
	}
}
