package serve_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/serve"
)

// TestMain lets the test binary be a 'courier serve' of its own, to be
// killed: with COURIER_SERVE_CHILD set to a root, it serves that root
// with the token COURIER_SERVE_TOKEN and writes its address into the
// root's file "addr".
func TestMain(m *testing.M) {
	if root := os.Getenv("COURIER_SERVE_CHILD"); root != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		addr := filepath.Join(root, "addr")
		if err := os.WriteFile(addr+".tmp", []byte(ln.Addr().String()), 0o644); err != nil {
			panic(err)
		}
		if err := os.Rename(addr+".tmp", addr); err != nil {
			panic(err)
		}
		serve.New(context.Background(), serve.Options{Config: settings(root), Token: os.Getenv("COURIER_SERVE_TOKEN")}).Run(ln)
		return
	}
	os.Exit(m.Run())
}

// A server killed (kill -9) in the middle of a turn loses nothing: the
// next one finishes the turn, exactly once. The command caught in flight
// is reported and not run again; the commands after it are carried out.
func TestKilledMidTurn(t *testing.T) {
	root := t.TempDir()
	cfg := settings(root)
	id, err := runner.New(cfg).Create("killed mid-turn", runner.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := serve.NewToken()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "COURIER_SERVE_CHILD="+root, "COURIER_SERVE_TOKEN="+token)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	addr := waitFor(t, filepath.Join(root, "addr"))
	reply := "[CREATE_FILE path=\"before.txt\"]\nbefore\n[/CREATE_FILE]\n\n" +
		"[RUN_COMMAND]\necho ran >> runs.txt; sleep 60\n[/RUN_COMMAND]\n\n" +
		"[CREATE_FILE path=\"after.txt\"]\nafter\n[/CREATE_FILE]\n"
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/api/sessions/"+id+"/reply", strings.NewReader(reply))
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, filepath.Join(cfg.Paths.Workspace, "runs.txt"))
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	s := start(t, cfg, nil) // the next courier serve
	deadline := time.Now().Add(20 * time.Second)
	var info runner.Info
	for info.Sequence != 2 || info.State != runner.StateWaiting {
		if time.Now().After(deadline) {
			t.Fatalf("the turn was not finished: %+v", info)
		}
		time.Sleep(50 * time.Millisecond)
		s.decode(s.get("/api/sessions/"+id), http.StatusOK, &info)
	}
	for name, want := range map[string]string{"runs.txt": "ran\n", "before.txt": "before\n", "after.txt": "after\n"} {
		if got := s.workspaceFile(name); got != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	if req := read(t, s.get("/api/sessions/"+id+"/request")); !strings.Contains(req, "was interrupted") || !strings.Contains(req, "not run again") {
		t.Errorf("the next request does not say the command was interrupted:\n%s", req)
	}
}

// waitFor waits for a file to exist and returns what it holds.
func waitFor(t *testing.T, p string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(p); err == nil && len(data) > 0 {
			return string(data)
		}
	}
	t.Fatalf("%s did not appear", p)
	return ""
}
