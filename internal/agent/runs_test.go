package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/agent/agenttest"
	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/procgroup"
)

// assertNowhere fails when secret appears in any file under dir.
func assertNowhere(t *testing.T, dir, secret string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if data, err := os.ReadFile(path); err != nil {
			return err
		} else if strings.Contains(string(data), secret) {
			t.Errorf("%s holds the key: %q", path, data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKeysNeverReachTheRunFolder plays an agent that prints the keys it
// was given, on stdout and stderr, and then fails: the keys must appear in
// no file of the run folder and not in the error, while the agent did get
// them.
func TestKeysNeverReachTheRunFolder(t *testing.T) {
	openaiKey, anthropicKey := "sk-proj-VERYSECRET-0001", "sk-ant-VERYSECRET-0002"
	t.Setenv("OPENAI_API_KEY", openaiKey)
	t.Setenv("ANTHROPIC_API_KEY", anthropicKey)
	t.Setenv("FAKELLM_ECHO_ENV", "OPENAI_API_KEY,ANTHROPIC_API_KEY")
	for _, exit := range []string{"0", "1"} {
		s := newSession(t)
		t.Setenv("FAKELLM_EXIT", exit)
		reply, err := send(t, s, commandAgentT(t), s.request(1, nil))
		if (err != nil) != (exit == "1") {
			t.Fatalf("exit %s: err = %v", exit, err)
		}
		for _, key := range []string{openaiKey, anthropicKey} {
			assertNowhere(t, s.runs.SessionDir, key)
			if err != nil && strings.Contains(err.Error(), key) {
				t.Errorf("the error holds the key: %v", err)
			}
			if strings.Contains(reply.Text, key) {
				t.Errorf("the reply holds the key: %q", reply.Text)
			}
		}
		dir := s.runDir(reply.RunID)
		// The agent did print them: redacted, not missing.
		for _, f := range []string{StdoutFile, StderrFile} {
			if got := readFile(t, filepath.Join(dir, f)); !strings.Contains(got, "OPENAI_API_KEY=[redacted]") {
				t.Errorf("%s = %q, want the redacted key", f, got)
			}
		}
		if exit == "1" && !strings.Contains(err.Error(), "ANTHROPIC_API_KEY=[redacted]") {
			t.Errorf("err = %v, want the agent's last words, redacted", err)
		}
	}
}

// TestKeysNeverReachTheRunFolderOverHTTP plays a server that echoes the
// key in its error and in a reply.
func TestKeysNeverReachTheRunFolderOverHTTP(t *testing.T) {
	key := "sk-proj-HTTPSECRET-0003"
	t.Setenv("OPENAI_API_KEY", key)
	srv := agenttest.NewChatServer(t,
		agenttest.Step{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`},
		agenttest.Step{Reply: "your key is " + key + ", thanks"})
	a := mustNew(t, Spec{Name: NameOpenAI, Model: "m", BaseURL: srv.URL, HTTP: fastHTTP})
	s := newSession(t)
	_, err := send(t, s, a, s.request(1, nil))
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "Incorrect API key provided: [redacted]") {
		t.Errorf("err = %v", err)
	}
	reply, err := send(t, s, a, s.request(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "your key is [redacted], thanks" {
		t.Errorf("reply %q", reply.Text)
	}
	assertNowhere(t, s.runs.SessionDir, key)
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("the key was not sent: %q", got)
	}
}

// startSleeper starts a process in a session of its own, as an agent
// program runs, and returns it.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "3600")
	cmd.SysProcAttr = procgroup.Attr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// TestRecoverClosesRunsACrashLeftOpen lays out what a courier killed in
// the middle of runs leaves: a run still marked running whose program
// still runs, a run folder without its record, a stray temporary file, a
// completed run. Recover must fail the open runs, stop the program, leave
// the completed run alone, and never touch a process that merely got a
// recorded pid again.
func TestRecoverClosesRunsACrashLeftOpen(t *testing.T) {
	s := newSession(t)
	if err := os.MkdirAll(s.runs.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	mk := func(i int) (string, string) {
		id := NewRunID(base.Add(time.Duration(i)*time.Second), 4242)
		dir := s.runDir(id)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return id, dir
	}
	// A completed run.
	doneID, doneDir := mk(0)
	done := RunInfo{RunID: doneID, Agent: "command", Status: StatusCompleted, StartTime: base}
	if err := writeInfo(doneDir, done); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(doneDir, StdoutFile), []byte("whole reply"), 0o644)
	// A run whose program still runs.
	agentProc := startSleeper(t)
	start, ok := processStart(agentProc.Process.Pid)
	if !ok {
		t.Fatal("no start time for a running process")
	}
	runningID, runningDir := mk(1)
	running := RunInfo{RunID: runningID, Agent: "claude", Status: StatusRunning, StartTime: base, PID: agentProc.Process.Pid, PIDStart: start}
	if err := writeInfo(runningDir, running); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runningDir, StdoutFile), []byte("Session: x\n[RUN_COMMAND]\nrm -rf"), 0o644)
	os.WriteFile(filepath.Join(runningDir, atomicfile.TempPrefix+RunInfoFile+"-123"), []byte("{"), 0o644)
	// A run recorded with the pid of a process that is not its program
	// (the pid was reused): a wrong start time.
	bystander := startSleeper(t)
	reusedID, reusedDir := mk(2)
	reused := RunInfo{RunID: reusedID, Agent: "claude", Status: StatusRunning, StartTime: base, PID: bystander.Process.Pid, PIDStart: 1}
	if err := writeInfo(reusedDir, reused); err != nil {
		t.Fatal(err)
	}
	// A run folder without a record.
	bareID, _ := mk(3)

	closed, err := s.runs.Recover()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{runningID, reusedID, bareID}; !slices.Equal(closed, want) {
		t.Errorf("Recover closed %v, want %v", closed, want)
	}
	for _, id := range closed {
		info := readInfoT(t, s.runDir(id))
		if info.Status != StatusFailed || info.Error == "" || info.EndTime == nil || info.PID != 0 {
			t.Errorf("run %s after recovery: %+v", id, info)
		}
	}
	if info := readInfoT(t, doneDir); info.Status != StatusCompleted || info.Error != "" {
		t.Errorf("the completed run changed: %+v", info)
	}
	waitGone(t, agentProc.Process.Pid)
	if !alive(bystander.Process.Pid) {
		t.Error("Recover killed a process that only shares a recorded pid")
	}
	entries, _ := os.ReadDir(runningDir)
	for _, e := range entries {
		if atomicfile.IsTemp(e.Name()) {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
	// Recovering again finds nothing to do.
	if again, err := s.runs.Recover(); err != nil || len(again) != 0 {
		t.Errorf("second Recover: %v, %v", again, err)
	}
	// A new run names the latest one as previous and sorts after it.
	reply, err := send(t, s, commandAgentT(t), s.request(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Info.PreviousRunID != bareID || reply.RunID <= bareID {
		t.Errorf("new run %s, previous %s; want after %s", reply.RunID, reply.Info.PreviousRunID, bareID)
	}
}

// TestRunIDsFollowEvenIfTheClockWentBack: a run recorded in the future
// (the clock was set back since) still comes before the next one.
func TestRunIDsFollowEvenIfTheClockWentBack(t *testing.T) {
	s := newSession(t)
	future := NewRunID(time.Now().Add(time.Hour), 1)
	if err := os.MkdirAll(s.runDir(future), 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 3 {
		reply, err := send(t, s, commandAgentT(t), s.request(1, nil))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, reply.RunID)
	}
	all := runIDs(t, s.runs)
	if want := append([]string{future}, ids...); !slices.Equal(all, want) {
		t.Errorf("runs in order %v, want %v", all, want)
	}
}

func TestSendWithRestarts(t *testing.T) {
	t.Run("succeeds after failed runs", func(t *testing.T) {
		s := newSession(t)
		t.Setenv("FAKELLM_STATE", t.TempDir())
		t.Setenv("FAKELLM_FAIL", "2")
		obs := &events{}
		req := s.request(1, nil)
		req.Observer = obs.Observe
		reply, err := s.runs.SendWithRestarts(t.Context(), commandAgentT(t), req, RestartPolicy{MaxRestarts: 3, Pause: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ids := runIDs(t, s.runs)
		if len(ids) != 3 || reply.RunID != ids[2] {
			t.Fatalf("runs %v, reply from %s", ids, reply.RunID)
		}
		for i, id := range ids {
			info := readInfoT(t, s.runDir(id))
			wantStatus := StatusFailed
			if i == 2 {
				wantStatus = StatusCompleted
			}
			if info.Status != wantStatus || (i > 0 && info.PreviousRunID != ids[i-1]) {
				t.Errorf("run %d: %+v", i, info)
			}
		}
		var restarts []int
		for _, e := range obs.all {
			if e.Kind == EventRestart {
				restarts = append(restarts, e.Attempt)
				if !strings.Contains(e.Err.Error(), "scripted failure") || e.Wait != time.Millisecond {
					t.Errorf("restart event %+v", e)
				}
			}
		}
		if !slices.Equal(restarts, []int{2, 3}) {
			t.Errorf("restart events for attempts %v, want [2 3]", restarts)
		}
	})
	t.Run("gives up after MaxRestarts runs", func(t *testing.T) {
		s := newSession(t)
		t.Setenv("FAKELLM_STATE", t.TempDir())
		t.Setenv("FAKELLM_FAIL", "5")
		_, err := s.runs.SendWithRestarts(t.Context(), commandAgentT(t), s.request(1, nil), RestartPolicy{MaxRestarts: 3, Pause: time.Millisecond})
		var ee *ExitError
		if err == nil || !strings.HasPrefix(err.Error(), "3 runs failed, the last: run ") || !errors.As(err, &ee) || ee.Code != 7 {
			t.Errorf("err = %v", err)
		}
		if n := len(runIDs(t, s.runs)); n != 3 {
			t.Errorf("%d runs, want 3", n)
		}
	})
	t.Run("the pause ends with the context", func(t *testing.T) {
		s := newSession(t)
		t.Setenv("FAKELLM_STATE", t.TempDir())
		t.Setenv("FAKELLM_FAIL", "5")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := s.request(1, nil)
		req.Observer = func(e Event) {
			if e.Kind == EventRestart {
				cancel()
			}
		}
		done := make(chan error, 1)
		go func() {
			_, err := s.runs.SendWithRestarts(ctx, commandAgentT(t), req, RestartPolicy{MaxRestarts: 3, Pause: time.Hour})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped before restarting") {
				t.Errorf("err = %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the pause did not end with the context")
		}
		if n := len(runIDs(t, s.runs)); n != 1 {
			t.Errorf("%d runs, want 1", n)
		}
	})
}

// TestSendLeavesNoTemporaryFiles: the atomic writes of a run clean up
// after themselves.
func TestSendLeavesNoTemporaryFiles(t *testing.T) {
	s := newSession(t)
	reply, err := send(t, s, commandAgentT(t), s.request(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(s.runDir(reply.RunID))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{PromptFile, RunInfoFile, StderrFile, StdoutFile}; !slices.Equal(names, want) {
		t.Errorf("run folder holds %v, want %v", names, want)
	}
}

// TestTimeBudgetIsTheSessions: the time budget covers every run of the
// session, whichever Runs (whichever courier) sent them. A run that
// reaches it is stopped and fails; no run starts once it is spent, not
// even through the restart loop; a larger budget lets runs go on.
func TestTimeBudgetIsTheSessions(t *testing.T) {
	s := newSession(t)
	t.Setenv("FAKELLM_SLEEP", "1h")
	s.runs.TimeBudget = 300 * time.Millisecond
	reply, err := s.runs.SendWithRestarts(t.Context(), commandAgentT(t), s.request(1, nil), RestartPolicy{MaxRestarts: 3, Pause: time.Millisecond})
	var budget *BudgetError
	if !errors.As(err, &budget) || budget.Budget != s.runs.TimeBudget || budget.Spent < s.runs.TimeBudget {
		t.Fatalf("err = %v, want a *BudgetError with at least %s spent", err, s.runs.TimeBudget)
	}
	if info := readInfoT(t, s.runDir(reply.RunID)); info.Status != StatusFailed || !strings.Contains(info.Error, "reached its budget of 300ms") {
		t.Errorf("run-info %+v", info)
	}
	if n := len(runIDs(t, s.runs)); n != 1 {
		t.Errorf("%d runs, want 1: no restart can give back time", n)
	}

	// Another courier on the same session, with the same budget.
	later := Runs{SessionDir: s.runs.SessionDir, TimeBudget: s.runs.TimeBudget}
	if _, err := later.Send(t.Context(), commandAgentT(t), s.request(1, nil)); !errors.As(err, &budget) {
		t.Errorf("err = %v, want a *BudgetError before any run", err)
	}
	if n := len(runIDs(t, s.runs)); n != 1 {
		t.Errorf("%d runs, want 1: a spent budget starts no run", n)
	}

	t.Setenv("FAKELLM_SLEEP", "")
	later.TimeBudget = time.Minute
	if _, err := later.Send(t.Context(), commandAgentT(t), s.request(1, nil)); err != nil {
		t.Fatal(err)
	}
	spent, err := later.spent()
	if err != nil || spent < 300*time.Millisecond {
		t.Errorf("spent = %s, %v; want the runs' time added up", spent, err)
	}
}

// TestRecoverCountsACrashedRunToItsLastSignOfLife: a run a crash left
// open ended when courier did, not when it was found: its time counts up
// to the last change of its files, so a session found days later has not
// spent days of its budget.
func TestRecoverCountsACrashedRunToItsLastSignOfLife(t *testing.T) {
	s := newSession(t)
	if err := os.MkdirAll(s.runs.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	id := NewRunID(start, 4242)
	dir := s.runDir(id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeInfo(dir, RunInfo{RunID: id, Agent: "command", Status: StatusRunning, StartTime: start}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, StdoutFile)
	if err := os.WriteFile(out, []byte("half a re"), 0o644); err != nil {
		t.Fatal(err)
	}
	lastWrite := start.Add(90 * time.Second)
	for _, name := range []string{RunInfoFile, StdoutFile} {
		if err := os.Chtimes(filepath.Join(dir, name), lastWrite, lastWrite); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.runs.Recover(); err != nil {
		t.Fatal(err)
	}
	spent, err := s.runs.spent()
	if err != nil || spent != 90*time.Second {
		t.Errorf("spent = %s, %v; want 1m30s", spent, err)
	}
}
