package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/agent/agenttest"
)

// script writes a fakellm script of replies, one per sequence number.
func script(t *testing.T, replies ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.txt")
	if err := os.WriteFile(path, []byte(strings.Join(replies, "\n--- next reply ---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCommandBackendRunsAFullRequest(t *testing.T) {
	s := newSession(t)
	t.Setenv("FAKELLM_SCRIPT", script(t,
		"expect: say hello\nSession: {{SESSION}}\nSequence: {{SEQUENCE}}\n[CREATE_FILE path=\"hello.txt\"]\nhello\n[/CREATE_FILE]\n",
		"Session: {{SESSION}}\nSequence: {{SEQUENCE}}\n[DONE]\nsaid hello\n[/DONE]\n"))
	t.Setenv("FAKELLM_STDERR", "thinking about it")
	a := commandAgentT(t)
	obs := &events{}

	req := s.request(1, nil)
	req.Observer = obs.Observe
	reply, err := send(t, s, a, req)
	if err != nil {
		t.Fatal(err)
	}
	want := "Session: 1a2b3c4d\nSequence: 1\n[CREATE_FILE path=\"hello.txt\"]\nhello\n[/CREATE_FILE]\n"
	if reply.Text != want {
		t.Errorf("reply %q, want %q", reply.Text, want)
	}
	dir := s.runDir(reply.RunID)
	if reply.Path != filepath.Join(dir, StdoutFile) {
		t.Errorf("reply path %s", reply.Path)
	}
	if got := readFile(t, filepath.Join(dir, PromptFile)); got != req.Prompt {
		t.Errorf("prompt.md = %q, want the request", got)
	}
	if got := readFile(t, filepath.Join(dir, StdoutFile)); got != want {
		t.Errorf("stdout = %q", got)
	}
	if got := readFile(t, filepath.Join(dir, StderrFile)); got != "thinking about it\n" {
		t.Errorf("stderr = %q", got)
	}
	info := readInfoT(t, dir)
	if info.Status != StatusCompleted || info.Agent != NameCommand || info.ExitCode == nil || *info.ExitCode != 0 ||
		info.StdoutBytes != int64(len(want)) || info.StderrBytes != int64(len("thinking about it\n")) ||
		info.EndTime == nil || info.EndTime.Before(info.StartTime) || info.PreviousRunID != "" ||
		info.ProjectID != "workspace" || info.TaskID != "1a2b3c4d" || info.Error != "" || info.PID != 0 {
		t.Errorf("run-info %+v", info)
	}
	if kinds := obs.kinds(); kinds[0] != EventStart || kinds[len(kinds)-1] != EventEnd || !slices.Contains(kinds, EventProgress) {
		t.Errorf("events %v, want start, progress..., end", kinds)
	}
	if end, _ := obs.last(EventEnd); end.Status != StatusCompleted || end.Bytes != int64(len(want)) || end.RunID != reply.RunID || end.Agent != NameCommand {
		t.Errorf("end event %+v", end)
	}

	// The second request is a new run that names the first.
	second, err := send(t, s, a, s.request(2, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(second.Text, "[DONE]") || second.Info.PreviousRunID != reply.RunID {
		t.Errorf("second run: %q, previous %q", second.Text, second.Info.PreviousRunID)
	}
	if ids := runIDs(t, s.runs); !slices.Equal(ids, []string{reply.RunID, second.RunID}) {
		t.Errorf("runs %v", ids)
	}
}

// TestCommandBackendChecksOfTheFakeLLM shows fakellm refusing a request
// without the previous turn's results, and the run failing with its
// message.
func TestCommandBackendChecksOfTheFakeLLM(t *testing.T) {
	s := newSession(t)
	t.Setenv("FAKELLM_SCRIPT", script(t, "one", "two"))
	req := s.request(2, nil)
	req.Prompt = strings.Replace(req.Prompt, "## Previous Command Results", "## Something Else", 1)
	_, err := send(t, s, commandAgentT(t), req)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || !strings.Contains(err.Error(), "does not show the previous turn's results") {
		t.Errorf("err = %v, want exit 3 naming the missing results", err)
	}
}

// TestCommandArgumentsAreNeverShellWords runs a command whose arguments
// a shell would expand, split or act on, and checks the program got each
// word as written, and the request on stdin.
func TestCommandArgumentsAreNeverShellWords(t *testing.T) {
	s := newSession(t)
	rec := t.TempDir()
	outside := filepath.Join(t.TempDir(), "pwned")
	t.Setenv("FAKELLM_RECORD", rec)
	args := []string{"two words", "", "$HOME", "`touch " + outside + "`", "$(touch " + outside + ")", "; touch " + outside, "*"}
	reply, err := send(t, s, commandAgentT(t, args...), s.request(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	got := jsonArgs(t, filepath.Join(rec, "argv.json"))
	if want := append([]string{"fakellm"}, args...); !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
	if got := readFile(t, filepath.Join(rec, "stdin")); got != s.request(1, nil).Prompt {
		t.Errorf("stdin %q, want the request", got)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a shell ran: %s exists", outside)
	}
	if reply.Text != "reply from fakellm\n" {
		t.Errorf("reply %q", reply.Text)
	}
}

func TestCommandBackendEnvironment(t *testing.T) {
	s := newSession(t)
	t.Setenv("FROM_PROCESS", "process")
	t.Setenv("OVERRIDDEN", "process")
	t.Setenv("FAKELLM_ECHO_ENV", "TASK_FOLDER,RUN_FOLDER,JRUN_PROJECT_ID,JRUN_TASK_ID,JRUN_ID,FROM_PROCESS,OVERRIDDEN,EXTRA")
	req := s.request(1, map[string]string{"OVERRIDDEN": "run", "EXTRA": "extra", "TASK_FOLDER": "/forged", "JRUN_ID": "forged"})
	reply, err := send(t, s, commandAgentT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	session, _ := filepath.Abs(s.runs.SessionDir)
	runDir, _ := filepath.Abs(s.runDir(reply.RunID))
	for _, want := range []string{
		"TASK_FOLDER=" + session + "\n",
		"RUN_FOLDER=" + runDir + "\n",
		"JRUN_PROJECT_ID=workspace\n",
		"JRUN_TASK_ID=1a2b3c4d\n",
		"JRUN_ID=" + reply.RunID + "\n",
		"FROM_PROCESS=process\n",
		"OVERRIDDEN=run\n",
		"EXTRA=extra\n",
	} {
		if !strings.Contains(reply.Text, want) {
			t.Errorf("the agent's environment lacks %q:\n%s", want, reply.Text)
		}
	}
}

// projectReader is a stand-in for a coding CLI at its worst: it reads
// .claude/settings.json in its working folder and every folder above it,
// runs the apiKeyHelper it names, and prints the folder it ran in.
const projectReader = `#!/bin/sh
d=$(pwd)
while :; do
	f="$d/.claude/settings.json"
	[ -f "$f" ] && sh -c "$(sed -En 's/.*"apiKeyHelper": *"([^"]*)".*/\1/p' "$f")"
	[ "$d" = / ] && break
	d=$(dirname "$d")
done
pwd
`

// TestAgentNeverRunsInTheWorkspace plants settings that run a program in
// the workspace, as a reply can, and runs a program that acts on such
// settings in its working folder and above: it must find none, whether
// courier's session folder lies beside the workspace or inside it.
func TestAgentNeverRunsInTheWorkspace(t *testing.T) {
	tests := []struct {
		name     string
		sessions string // the session folder, relative to the workspace
		cache    string // XDG_CACHE_HOME, relative to the workspace; "" for one outside
		wantErr  string
	}{
		{name: "session folder beside the workspace", sessions: "../root/sessions/1a2b3c4d"},
		{name: "session folder inside the workspace", sessions: ".courier/sessions/1a2b3c4d"},
		{name: "cache folder inside the workspace", sessions: "../root/sessions/1a2b3c4d", cache: ".cache",
			wantErr: "is inside the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "project")
			marker := filepath.Join(t.TempDir(), "pwned")
			settings := `{"apiKeyHelper": "touch ` + marker + `"}`
			if err := os.MkdirAll(filepath.Join(ws, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			cache := filepath.Join(t.TempDir(), "cache")
			if tt.cache != "" {
				cache = filepath.Join(ws, tt.cache)
			}
			t.Setenv("XDG_CACHE_HOME", cache)
			s := session{runs: Runs{SessionDir: filepath.Join(ws, tt.sessions)}, workspace: ws}
			script := filepath.Join(t.TempDir(), "claude")
			if err := os.WriteFile(script, []byte(projectReader), 0o755); err != nil {
				t.Fatal(err)
			}
			reply, err := send(t, s, mustNew(t, Spec{Command: []string{script}}), s.request(1, nil))
			if _, statErr := os.Stat(marker); !errors.Is(statErr, os.ErrNotExist) {
				t.Fatalf("the agent program ran the workspace's apiKeyHelper (%v)", statErr)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !permanent(err) {
					t.Fatalf("err = %v, want a permanent error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := strings.TrimSuffix(reply.Text, "\n")
			if !strings.HasPrefix(dir, filepath.Join(cache, "courier", "agents")+string(filepath.Separator)) {
				t.Errorf("ran in %s, want a folder under %s", dir, cache)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the agent's folder %s is left after the run (%v)", dir, err)
			}
		})
	}
}

// TestAgentEnvironmentNamesNoWorkspacePath gives courier an environment
// naming the workspace, as a person's shell can (direnv's PATH entry, an
// active virtualenv, the folder courier was started in), with a program
// named like the agent planted in the workspace's PATH entry: the agent
// must run the one outside, and see no workspace path.
func TestAgentEnvironmentNamesNoWorkspacePath(t *testing.T) {
	s := newSession(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	planted := filepath.Join(s.workspace, "node_modules", ".bin")
	if err := os.MkdirAll(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planted, "claude"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "ws-link")
	if err := os.Symlink(s.workspace, link); err != nil {
		t.Fatal(err)
	}
	real := agenttest.Install(t, fakellm, "claude")
	rest := real + string(os.PathListSeparator) + os.Getenv("PATH")
	t.Setenv("PATH", planted+string(os.PathListSeparator)+filepath.Join(link, "bin")+string(os.PathListSeparator)+rest)
	t.Setenv("VIRTUAL_ENV", filepath.Join(s.workspace, ".venv"))
	t.Setenv("PWD", s.workspace)
	t.Setenv("OLDPWD", filepath.Dir(s.workspace))
	t.Setenv("FAKELLM_ECHO_ENV", "PATH,VIRTUAL_ENV,PWD,OLDPWD")
	reply, err := send(t, s, mustNew(t, Spec{Name: "claude"}), s.request(1, nil))
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the program planted in the workspace ran (%v)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PATH=" + rest + "\n", "VIRTUAL_ENV=\n", "OLDPWD=" + filepath.Dir(s.workspace) + "\n"} {
		if !strings.Contains(reply.Text, want) {
			t.Errorf("the agent's environment lacks %q:\n%s", want, reply.Text)
		}
	}
	if strings.Contains(reply.Text, "PWD="+s.workspace) {
		t.Errorf("the agent's PWD names the workspace:\n%s", reply.Text)
	}
}

func TestCommandBackendFailures(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		wantErr   string
		wantCode  int // -1: no exit code recorded
		wantSig   string
		permanent bool
	}{
		{name: "exit code", env: map[string]string{"FAKELLM_EXIT": "2", "FAKELLM_STDERR": "rate limited\n\x1b[31mquota exceeded\x1b[0m"},
			wantErr: "command exited with code 2: quota exceeded", wantCode: 2},
		{name: "empty reply", env: map[string]string{"FAKELLM_REPLY": " \n"},
			wantErr: "command finished without writing a reply", wantCode: 0},
		{name: "killed by a signal", args: []string{"sh", "-c", "echo 'out of memory' >&2; kill -KILL $$"},
			wantErr: "command was killed by SIGKILL (exit code 137): out of memory", wantCode: 137, wantSig: "SIGKILL"},
		{name: "not installed", args: []string{"no-such-agent-program"},
			wantErr: `agent program "no-such-agent-program" not found`, wantCode: -1, permanent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			argv := append([]string{fakellm}, tt.args...)
			if tt.args != nil {
				argv = tt.args
			}
			a := mustNew(t, Spec{Name: NameCommand, Command: argv})
			reply, err := send(t, s, a, s.request(1, nil))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if permanent(err) != tt.permanent {
				t.Errorf("permanent(%v) = %v", err, permanent(err))
			}
			if reply.Text != "" {
				t.Errorf("a failed run handed over %q", reply.Text)
			}
			info := readInfoT(t, s.runDir(reply.RunID))
			if info.Status != StatusFailed || !strings.Contains(info.Error, tt.wantErr) {
				t.Errorf("run-info %+v", info)
			}
			switch {
			case tt.wantCode < 0 && info.ExitCode != nil:
				t.Errorf("exit code %d recorded for a program that never ran", *info.ExitCode)
			case tt.wantCode >= 0 && (info.ExitCode == nil || *info.ExitCode != tt.wantCode):
				t.Errorf("exit code %v, want %d", info.ExitCode, tt.wantCode)
			}
			if info.Signal != tt.wantSig {
				t.Errorf("signal %q recorded, want %q", info.Signal, tt.wantSig)
			}
			var ee *ExitError
			if tt.wantCode > 0 && (!errors.As(err, &ee) || ee.Code != tt.wantCode || ee.Signal != tt.wantSig) {
				t.Errorf("err %v is not an *ExitError with code %d and signal %q", err, tt.wantCode, tt.wantSig)
			}
		})
	}
}

// TestCancelKillsTheAgentAndEverythingItStarted is Ctrl-C in the middle
// of a run: the program and the process it started must be gone, the run
// failed, and its partial output never handed over.
func TestCancelKillsTheAgentAndEverythingItStarted(t *testing.T) {
	s := newSession(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	a := shAgent(t, `sleep 3600 & printf 'Session: 1a2b3c4d\nSequence: 1\n[RUN_COMMAND]\nrm -rf'; echo $$ $! > "$1"; exec sleep 3600`, pidfile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		reply Reply
		err   error
	}
	done := make(chan result, 1)
	go func() {
		r, err := s.runs.Send(ctx, a, s.request(1, nil))
		done <- result{r, err}
	}()
	pids := waitPIDs(t, pidfile, 2)
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d is not running", pid)
		}
	}
	// While it runs, its record names it.
	ids := runIDs(t, s.runs)
	if info := readInfoT(t, s.runDir(ids[0])); info.Status != StatusRunning || info.PID != pids[0] {
		t.Errorf("running run-info %+v, want running with pid %d", info, pids[0])
	}
	cancel()
	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Send did not return after cancel")
	}
	if !errors.Is(res.err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", res.err)
	}
	waitGone(t, pids...)
	if res.reply.Text != "" {
		t.Errorf("a canceled run handed over %q", res.reply.Text)
	}
	info := readInfoT(t, s.runDir(res.reply.RunID))
	if info.Status != StatusFailed || info.ExitCode != nil || !strings.Contains(info.Error, "canceled") {
		t.Errorf("run-info %+v", info)
	}
	if got := readFile(t, filepath.Join(s.runDir(res.reply.RunID), StdoutFile)); !strings.HasSuffix(got, "rm -rf") {
		t.Errorf("stdout %q, want the partial output kept for the person", got)
	}
}

// TestLeftoverProcessIsKilled: an agent that exits but leaves a process
// behind holding its output must not keep the run waiting, nor outlive it.
func TestLeftoverProcessIsKilled(t *testing.T) {
	s := newSession(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	reply, err := send(t, s, shAgent(t, `sleep 3600 & echo $$ $! > "$1"; echo "reply from fakellm"`, pidfile), s.request(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "reply from fakellm\n" {
		t.Errorf("reply %q", reply.Text)
	}
	pids := waitPIDs(t, pidfile, 2)
	waitGone(t, pids...)
}

// TestRunawayOutputIsStopped: a program printing without end must not
// fill the disk.
func TestRunawayOutputIsStopped(t *testing.T) {
	s := newSession(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	a := mustNew(t, Spec{Name: NameCommand, Command: []string{"sh", "-c", `echo $$ > "$1"; exec yes xxxxxxxxxxxxxxxx`, "sh", pidfile}, MaxReply: 1 << 20})
	reply, err := send(t, s, a, s.request(1, nil))
	if err == nil || !strings.Contains(err.Error(), "the reply of command passed 1 MB; courier stopped it") {
		t.Fatalf("err = %v", err)
	}
	waitGone(t, waitPIDs(t, pidfile, 1)...)
	if size := fileSize(filepath.Join(s.runDir(reply.RunID), StdoutFile)); size > 1<<20 {
		t.Errorf("stdout holds %d bytes, more than the limit", size)
	}
	if info := readInfoT(t, s.runDir(reply.RunID)); info.Status != StatusFailed {
		t.Errorf("run-info %+v", info)
	}
}

// TestPanicInsideABackendBecomesAnError makes the backend panic in the
// middle of a run (through the progress callback it calls) and checks the
// panic became the run's error and the program is gone.
func TestPanicInsideABackendBecomesAnError(t *testing.T) {
	s := newSession(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	t.Setenv("FAKELLM_PIDFILE", pidfile)
	t.Setenv("FAKELLM_PARTIAL", "some output")
	t.Setenv("FAKELLM_SLEEP", "1h")
	req := s.request(1, nil)
	req.Observer = func(e Event) {
		if e.Kind == EventProgress {
			panic("console bug")
		}
	}
	reply, err := send(t, s, commandAgentT(t), req)
	if err == nil || !strings.Contains(err.Error(), "agent panic: console bug") {
		t.Fatalf("err = %v, want the panic as an error", err)
	}
	waitGone(t, waitPIDs(t, pidfile, 1)...)
	if info := readInfoT(t, s.runDir(reply.RunID)); info.Status != StatusFailed || !strings.Contains(info.Error, "console bug") {
		t.Errorf("run-info %+v", info)
	}
}

// panicky is an agent from elsewhere that panics.
type panicky struct{}

func (panicky) Execute(context.Context, *RunContext) error { panic("backend bug") }
func (panicky) Type() string                               { return "panicky" }

func TestPanicOfAnyAgentBecomesAnError(t *testing.T) {
	s := newSession(t)
	reply, err := send(t, s, panicky{}, s.request(1, nil))
	if err == nil || !strings.Contains(err.Error(), "agent panic: backend bug") {
		t.Fatalf("err = %v", err)
	}
	if info := readInfoT(t, s.runDir(reply.RunID)); info.Status != StatusFailed || info.Agent != "panicky" {
		t.Errorf("run-info %+v", info)
	}
}

// TestExecuteAlone runs a backend as the protocol describes, without
// Runs: the caller's files, exit code 0, and the typed error otherwise.
func TestExecuteAlone(t *testing.T) {
	dir := t.TempDir()
	rc := &RunContext{
		RunID: NewRunID(time.Now(), os.Getpid()), ProjectID: "p", TaskID: "t", Prompt: "hello",
		WorkingDir: dir, StdoutPath: filepath.Join(dir, "out"), StderrPath: filepath.Join(dir, "err"),
	}
	t.Setenv("FAKELLM_REPLY", "hi there")
	if err := commandAgentT(t).Execute(t.Context(), rc); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, rc.StdoutPath); got != "hi there" {
		t.Errorf("stdout %q", got)
	}
	t.Setenv("FAKELLM_EXIT", "9")
	err := commandAgentT(t).Execute(t.Context(), rc)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 9 || ee.Agent != NameCommand {
		t.Errorf("err = %#v, want *ExitError code 9", err)
	}
}

// TestFakeLLMScriptFolder: a folder of replies named by sequence number,
// with expectations on the request.
func TestFakeLLMScriptFolder(t *testing.T) {
	s := newSession(t)
	dir := t.TempDir()
	files := map[string]string{
		"1":       "first {{SEQUENCE}}",
		"002.txt": "expect: ## Previous Command Results\nexpect: (results)\nsecond {{SEQUENCE}} of {{SESSION}}",
		"3.txt":   "expect: something the request lacks\nthird",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("FAKELLM_SCRIPT", dir)
	a := commandAgentT(t)
	for seq, want := range map[int]string{1: "first 1", 2: "second 2 of 1a2b3c4d"} {
		if reply, err := send(t, s, a, s.request(seq, nil)); err != nil || reply.Text != want {
			t.Errorf("request %d: %q, %v; want %q", seq, reply.Text, err, want)
		}
	}
	for seq, want := range map[int]string{3: `request 3 does not hold "something the request lacks"`, 4: "no reply scripted for sequence 4"} {
		if _, err := send(t, s, a, s.request(seq, nil)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("request %d: %v, want %q", seq, err, want)
		}
	}
}

// shAgent is the command backend running a shell script, args from $1.
func shAgent(t *testing.T, script string, args ...string) Agent {
	return mustNew(t, Spec{Name: NameCommand, Command: append([]string{"sh", "-c", script, "sh"}, args...)})
}
