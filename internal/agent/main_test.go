package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/agent/agenttest"
)

// fakellm is the path of the fakellm program, built once by TestMain.
var fakellm string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "courier-fakellm-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Agent programs run in folders under the person's cache folder: the
	// tests keep theirs out of the real one.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	fakellm, err = agenttest.BuildFakeLLM(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// session is a session folder and a workspace, as courier lays them out.
type session struct {
	runs      Runs
	workspace string
}

func newSession(t *testing.T) session {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "workspace")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return session{runs: Runs{SessionDir: filepath.Join(root, "sessions", "1a2b3c4d")}, workspace: ws}
}

// request is a courier-like request of sequence seq.
func (s session) request(seq int, env map[string]string) Request {
	text := fmt.Sprintf("=== HEADER ===\nSession: 1a2b3c4d\nSequence: %d\nTask: say hello\n\n=== PROTOCOL ===\n(protocol)\n\n=== CONTEXT ===\n", seq)
	if seq > 1 {
		text += "\n## Previous Command Results\n(results)\n"
	}
	text += "\n=== PROMPT ===\nsay hello\n"
	return Request{Prompt: text, Workspace: s.workspace, ProjectID: "workspace", TaskID: "1a2b3c4d", Environment: env}
}

// runDir is the folder of a run.
func (s session) runDir(id string) string { return filepath.Join(s.runs.Dir(), id) }

// readInfoT reads a run's record.
func readInfoT(t *testing.T, dir string) RunInfo {
	t.Helper()
	info, err := readInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// readFile reads a file, failing the test when it cannot.
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// runIDs lists the session's run folders.
func runIDs(t *testing.T, r Runs) []string {
	t.Helper()
	ids, err := r.ids()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// commandAgentT is the command backend running fakellm with args.
func commandAgentT(t *testing.T, args ...string) Agent {
	t.Helper()
	a, err := New(Spec{Name: NameCommand, Command: append([]string{fakellm}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// alive reports whether process pid exists and is not a zombie (which a
// container's init may never reap).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	end := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[end+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// waitGone waits until none of pids is alive, failing the test after a
// while.
func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d is still running", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// waitPIDs waits for fakellm's pid file and returns the pids in it.
func waitPIDs(t *testing.T, path string, want int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		fields := strings.Fields(string(data))
		if len(fields) >= want && strings.HasSuffix(string(data), "\n") {
			var pids []int
			for _, f := range fields {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, n)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid file %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// events records what an Observer hears.
type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) Observe(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) kinds() []EventKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []EventKind
	for _, ev := range e.all {
		out = append(out, ev.Kind)
	}
	return out
}

func (e *events) last(kind EventKind) (Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.all) - 1; i >= 0; i-- {
		if e.all[i].Kind == kind {
			return e.all[i], true
		}
	}
	return Event{}, false
}

// send sends a request with a background context.
func send(t *testing.T, s session, a Agent, req Request) (Reply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.runs.Send(ctx, a, req)
}

// jsonArgs decodes fakellm's argv.json.
func jsonArgs(t *testing.T, path string) []string {
	t.Helper()
	var args []string
	if err := json.Unmarshal([]byte(readFile(t, path)), &args); err != nil {
		t.Fatal(err)
	}
	return args
}
