package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/agent/agenttest"
)

// TestPresetInvocations runs each preset against a stub program of its
// name first on PATH and pins the exact arguments and stdin it received.
func TestPresetInvocations(t *testing.T) {
	tests := []struct {
		name  string
		model string
		want  []string
	}{
		{"claude", "", []string{"claude", "-p", "--output-format", "text", "--tools", "", "--strict-mcp-config", "--no-session-persistence", "--setting-sources", "user"}},
		{"claude", "opus", []string{"claude", "-p", "--output-format", "text", "--tools", "", "--strict-mcp-config", "--no-session-persistence", "--setting-sources", "user", "--model", "opus"}},
		{"codex", "", []string{"codex", "exec", "--skip-git-repo-check", "--ephemeral", "--ignore-rules", "--sandbox", "read-only", "--color", "never",
			"-c", "features.shell_tool=false", "-c", "features.unified_exec=false", "-"}},
		{"codex", "gpt-5-codex", []string{"codex", "exec", "--skip-git-repo-check", "--ephemeral", "--ignore-rules", "--sandbox", "read-only", "--color", "never",
			"-c", "features.shell_tool=false", "-c", "features.unified_exec=false", "-m", "gpt-5-codex", "-"}},
		{"gemini", "", []string{"gemini", "--skip-trust", "--approval-mode", "default", "--output-format", "text", "-p", ""}},
		{"gemini", "gemini-2.5-pro", []string{"gemini", "--skip-trust", "--approval-mode", "default", "--output-format", "text", "-m", "gemini-2.5-pro", "-p", ""}},
		{"llm", "", []string{"llm", "prompt", "--no-log"}},
		{"llm", "gpt-4o", []string{"llm", "prompt", "--no-log", "-m", "gpt-4o"}},
		{"ollama", "qwen2.5-coder:7b", []string{"ollama", "run", "--nowordwrap", "--hidethinking", "qwen2.5-coder:7b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.model, func(t *testing.T) {
			s := newSession(t)
			bin := agenttest.Install(t, fakellm, tt.name)
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			rec := t.TempDir()
			t.Setenv("FAKELLM_RECORD", rec)
			a := mustNew(t, Spec{Name: tt.name, Model: tt.model})
			if a.Type() != tt.name {
				t.Errorf("Type() = %q", a.Type())
			}
			req := s.request(1, nil)
			reply, err := send(t, s, a, req)
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonArgs(t, filepath.Join(rec, "argv.json")); !slices.Equal(got, tt.want) {
				t.Errorf("argv\n got %q\nwant %q", got, tt.want)
			}
			if got := readFile(t, filepath.Join(rec, "stdin")); got != req.Prompt {
				t.Errorf("stdin %q, want the request", got)
			}
			if reply.Text != "reply from "+tt.name+"\n" || reply.Info.Agent != tt.name || reply.Info.Model != tt.model {
				t.Errorf("reply %q, run-info %+v", reply.Text, reply.Info)
			}
		})
	}
}

func TestPresetNotInstalled(t *testing.T) {
	s := newSession(t)
	t.Setenv("PATH", t.TempDir())
	_, err := send(t, s, mustNew(t, Spec{Name: "claude"}), s.request(1, nil))
	if err == nil || !strings.Contains(err.Error(), `agent program "claude" not found: not on PATH`) || !permanent(err) {
		t.Errorf("err = %v, want a permanent not-found error", err)
	}
}

func TestNewRefusesWhatCannotWork(t *testing.T) {
	tests := []struct {
		spec     Spec
		want     string
		wantHint string
	}{
		{Spec{}, "no agent chosen", "--agent NAME"},
		{Spec{Name: "claud"}, "unknown agent 'claud'; did you mean 'claude'?", "the agents are claude, codex, gemini, llm, ollama, command, openai"},
		{Spec{Name: "command"}, "the command agent has no command", "--agent-command"},
		{Spec{Name: "ollama"}, "the ollama agent needs a model", "--model"},
		{Spec{Name: "openai"}, "the openai agent needs a model", "--model"},
		{Spec{Name: "openai", Model: "m", BaseURL: "localhost:8080"}, "is not an http or https URL", "http://localhost:11434/v1"},
		{Spec{Name: "openai", Model: "m", APIKeyEnv: "MY-KEY"}, "api_key_env \"MY-KEY\" is not a variable name", ""},
	}
	for _, tt := range tests {
		_, err := New(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(fixOf(err), tt.wantHint) {
			t.Errorf("New(%+v) = %v (hint %q), want %q (hint with %q)", tt.spec, err, fixOf(err), tt.want, tt.wantHint)
		}
	}
	if got := Names(); !slices.Equal(got, []string{"claude", "codex", "gemini", "llm", "ollama", "command", "openai"}) {
		t.Errorf("Names() = %q", got)
	}
}

// TestCommandRelativePathIsFromTheCurrentFolder: --agent-command
// ./my-agent.sh means the file next to the person, not in the workspace.
func TestCommandRelativePathIsFromTheCurrentFolder(t *testing.T) {
	a := mustNew(t, Spec{Command: []string{"./agents/run.sh", "x"}})
	wd, _ := os.Getwd()
	if got := a.(*backend).argv; !slices.Equal(got, []string{filepath.Join(wd, "agents/run.sh"), "x"}) {
		t.Errorf("argv %q", got)
	}
}
