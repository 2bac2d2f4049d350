package clipboard

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name    string
		vars    []string // besides PATH and HOME
		tools   []string // the only programs on PATH
		want    string   // chosen tool set, or "" for an error
		wantErr string
	}{
		{name: "no graphical session", tools: []string{"xclip"}, wantErr: "neither DISPLAY nor WAYLAND_DISPLAY"},
		{name: "X without tools", vars: []string{"DISPLAY=:7"}, wantErr: "install xclip or xsel"},
		{name: "Wayland without tools", vars: []string{"WAYLAND_DISPLAY=wayland-0"}, wantErr: "install wl-clipboard"},
		{name: "Wayland and X without tools", vars: []string{"WAYLAND_DISPLAY=wayland-0", "DISPLAY=:7"},
			wantErr: "install wl-clipboard or xclip or xsel"},
		{name: "xclip preferred", vars: []string{"DISPLAY=:7"}, tools: []string{"xclip", "xsel"}, want: "xclip"},
		{name: "xsel when alone", vars: []string{"DISPLAY=:7"}, tools: []string{"xsel"}, want: "xsel"},
		{name: "X tools under Wayland without wl-clipboard", vars: []string{"WAYLAND_DISPLAY=wayland-0", "DISPLAY=:7"},
			tools: []string{"xclip"}, want: "xclip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append(bareEnv(t, tt.tools...), tt.vars...)
			c, err := Detect(env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "no clipboard") {
					t.Fatalf("Detect = %v, %v; want an error containing %q", c, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			if c.b.name != tt.want {
				t.Errorf("Detect chose %s, want %s", c.b.name, tt.want)
			}
		})
	}
}

// bareEnv is an environment with nothing but a PATH holding tools and a
// HOME, so no display of the machine running the test leaks in.
func bareEnv(t *testing.T, tools ...string) []string {
	var env []string
	for _, kv := range toolEnv(t, ":0", tools...) {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return env
}

func TestDetectIgnoresRelativePath(t *testing.T) {
	// A PATH entry like "." would pick tools out of the workspace.
	env := append(bareEnv(t, "xclip"), "DISPLAY=:7")
	for i, kv := range env {
		if bin, ok := strings.CutPrefix(kv, "PATH="); ok {
			t.Chdir(bin) // the tools are right here, reachable only relatively
			env[i] = "PATH=.:" + filepath.Base(bin)
		}
	}
	if c, err := Detect(env); err == nil {
		t.Fatalf("Detect with PATH=.:bin chose %s", c.b.name)
	}
}
