package shell

import (
	"slices"
	"strings"
	"testing"
)

func TestFilterEnvDropsSecrets(t *testing.T) {
	tests := []struct {
		name string
		kv   string
		keep []string
		kept bool
	}{
		{"plain variable", "HOME=/home/me", nil, true},
		{"path", "PATH=/usr/bin:/bin", nil, true},
		{"api key", "OPENAI_API_KEY=sk-1", nil, false},
		{"api key lower case", "my_api_key=x", nil, false},
		{"apikey", "SERVICE_APIKEY=x", nil, false},
		{"token", "GITHUB_TOKEN=ghp", nil, false},
		{"gh token", "GH_TOKEN=ghp", nil, false},
		{"npm token", "NPM_TOKEN=x", nil, false},
		{"aws key id", "AWS_ACCESS_KEY_ID=AKIA", nil, false},
		{"aws secret", "AWS_SECRET_ACCESS_KEY=x", nil, false},
		{"aws session", "AWS_SESSION_TOKEN=x", nil, false},
		{"azure secret", "AZURE_CLIENT_SECRET=x", nil, false},
		{"google credentials", "GOOGLE_APPLICATION_CREDENTIALS=/k.json", nil, false},
		{"password anywhere", "PGPASSWORD=x", nil, false},
		{"docker password", "DOCKER_PASSWORD=x", nil, false},
		{"passwd", "SMTP_PASSWD=x", nil, false},
		{"ssh agent", "SSH_AUTH_SOCK=/run/agent", nil, false},
		{"kept by exact name", "GITHUB_TOKEN=ghp", []string{"github_token"}, true},
		{"kept by glob", "CI_JOB_TOKEN=x", []string{"CI_*"}, true},
		{"keep list leaves others out", "NPM_TOKEN=x", []string{"CI_*"}, false},
		{"not a secret though similar", "TOKENIZERS_PARALLELISM=false", nil, true},
		{"malformed entry", "NOEQUALS", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FilterEnv([]string{tt.kv}, tt.keep)
			if slices.Contains(got, tt.kv) != tt.kept {
				t.Errorf("FilterEnv kept %q = %v, want %v (got %q)", tt.kv, !tt.kept, tt.kept, got)
			}
		})
	}
}

func TestFilterEnvSetsNonInteractiveDefaults(t *testing.T) {
	got := FilterEnv([]string{"PAGER=less", "EDITOR=vim", "TERM=xterm-256color"}, []string{"PAGER"})
	for _, want := range []string{"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "EDITOR=false", "VISUAL=false", "GIT_EDITOR=false", "DEBIAN_FRONTEND=noninteractive", "CI=true", "TERM=dumb"} {
		if !slices.Contains(got, want) {
			t.Errorf("FilterEnv result lacks %s: %q", want, got)
		}
	}
	names := map[string]int{}
	for _, kv := range got {
		name, _, _ := strings.Cut(kv, "=")
		names[name]++
	}
	for name, n := range names {
		if n > 1 {
			t.Errorf("%s appears %d times: %q", name, n, got)
		}
	}
}
