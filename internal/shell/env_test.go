package shell

import (
	"slices"
	"strings"
	"testing"
)

func TestEnvironKeepsOnlyAllowedVariables(t *testing.T) {
	tests := []struct {
		name string
		kv   string
		keep []string
		kept bool
	}{
		{"home", "HOME=/home/me", nil, true},
		{"path", "PATH=/usr/bin:/bin", nil, true},
		{"locale", "LC_ALL=C.UTF-8", nil, true},
		{"language", "LANG=de_DE.UTF-8", nil, true},
		{"time zone", "TZ=Europe/Berlin", nil, true},
		{"user", "USER=me", nil, true},
		{"toolchain location", "RUSTUP_HOME=/opt/rustup", nil, true},
		// Secrets whatever their names: none of them matches a deny pattern
		// of old, and none is kept.
		{"api key", "OPENAI_API_KEY=sk-1", nil, false},
		{"token", "GITHUB_TOKEN=ghp", nil, false},
		{"secret key", "SECRET_KEY=django", nil, false},
		{"database url", "DATABASE_URL=postgres://u:pw@db/x", nil, false},
		{"mysql password", "MYSQL_PWD=pw", nil, false},
		{"github pat", "GITHUB_PAT=ghp", nil, false},
		{"sentry dsn", "SENTRY_DSN=https://key@sentry.io/1", nil, false},
		{"ssh agent", "SSH_AUTH_SOCK=/run/agent", nil, false},
		{"session bus", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", nil, false},
		{"proxy with password", "HTTPS_PROXY=http://u:pw@proxy:3128", nil, false},
		{"plain setting", "PLAIN_SETTING=visible", nil, false},
		{"kept by exact name", "GITHUB_TOKEN=ghp", []string{"github_token"}, true},
		{"kept by glob", "CI_JOB_TOKEN=x", []string{"CI_*"}, true},
		{"keep list leaves others out", "NPM_TOKEN=x", []string{"CI_*"}, false},
		{"malformed entry", "NOEQUALS", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Environ([]string{tt.kv}, tt.keep, nil, nil)
			if slices.Contains(got, tt.kv) != tt.kept {
				t.Errorf("Environ kept %q = %v, want %v (got %q)", tt.kv, !tt.kept, tt.kept, got)
			}
		})
	}
}

func TestEnvironLayers(t *testing.T) {
	got := Environ(
		[]string{"PAGER=less", "EDITOR=vim", "TERM=xterm-256color", "PATH=/bin", "GOCACHE=/home/me/.cache/go-build"},
		[]string{"PAGER", "GOCACHE"},
		map[string]string{"GOCACHE": "/root/cache/tools/go-build", "TMPDIR": "/root/cache/tmp/s"},
		map[string]string{"EDITOR": "nano", "FROM_COMMAND": "1"},
	)
	for _, want := range []string{"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "VISUAL=false", "GIT_EDITOR=false",
		"DEBIAN_FRONTEND=noninteractive", "CI=true", "TERM=dumb", "PATH=/bin",
		"GOCACHE=/root/cache/tools/go-build", "TMPDIR=/root/cache/tmp/s", "EDITOR=nano", "FROM_COMMAND=1"} {
		if !slices.Contains(got, want) {
			t.Errorf("Environ result lacks %s: %q", want, got)
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
