package runner

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckLayout(t *testing.T) {
	tests := []struct {
		name string
		// setup makes the folders under base and returns the root and the
		// workspace.
		setup func(t *testing.T, base string) (root, ws string)
		want  string // part of the error, "" for none
	}{
		{"default layout", func(t *testing.T, b string) (string, string) {
			return b, mkdir(t, b, "workspace")
		}, ""},
		{"project beside the root", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "courier-work"), mkdir(t, b, "project")
		}, ""},
		{"root not made yet, beside the project", func(t *testing.T, b string) (string, string) {
			return filepath.Join(b, "new-root"), mkdir(t, b, "project")
		}, ""},
		{"workspace is the root", func(t *testing.T, b string) (string, string) {
			return b, b
		}, "holds the root"},
		{"root inside the workspace", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "project/state"), filepath.Join(b, "project")
		}, "holds the root"},
		{"root is the workspace's own .courier", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "project/.courier"), filepath.Join(b, "project")
		}, ""},
		{"root is a .courier deeper in the workspace", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "project/src/.courier"), filepath.Join(b, "project")
		}, "holds the root"},
		{"root is a link named .courier to a folder in the workspace", func(t *testing.T, b string) (string, string) {
			link := filepath.Join(b, "project/.courier")
			if err := os.Symlink(mkdir(t, b, "project/state"), link); err != nil {
				t.Fatal(err)
			}
			return link, filepath.Join(b, "project")
		}, "holds the root"},
		{"the workspace's own .courier, but it is the home folder", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "home/me/.courier"), filepath.Join(b, "home/me")
		}, "is your home folder"},
		{"workspace is /", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "root"), "/"
		}, "is the top of the file system"},
		{"root not made yet, inside the workspace", func(t *testing.T, b string) (string, string) {
			return filepath.Join(b, "project/later/root"), mkdir(t, b, "project")
		}, "holds the root"},
		{"workspace is inbox", func(t *testing.T, b string) (string, string) {
			return b, mkdir(t, b, "inbox")
		}, "holds inbox/"},
		{"workspace inside sessions", func(t *testing.T, b string) (string, string) {
			return b, mkdir(t, b, "sessions/0123abcd")
		}, "is inside sessions/"},
		{"workspace inside outbox", func(t *testing.T, b string) (string, string) {
			return b, mkdir(t, b, "outbox/x")
		}, "is inside outbox/"},
		{"workspace reached through a symlink to the root", func(t *testing.T, b string) (string, string) {
			root := mkdir(t, b, "root")
			link := filepath.Join(b, "ws")
			if err := os.Symlink(root, link); err != nil {
				t.Fatal(err)
			}
			return root, link
		}, "holds the root"},
		{"inbox is a symlink into the workspace", func(t *testing.T, b string) (string, string) {
			root, ws := mkdir(t, b, "root"), mkdir(t, b, "project")
			if err := os.Symlink(mkdir(t, ws, "drop"), filepath.Join(root, "inbox")); err != nil {
				t.Fatal(err)
			}
			return root, ws
		}, "holds inbox/"},
		{"settings file is a symlink into the workspace", func(t *testing.T, b string) (string, string) {
			root, ws := mkdir(t, b, "root"), mkdir(t, b, "project")
			if err := os.WriteFile(filepath.Join(ws, "courier.toml"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(ws, "courier.toml"), filepath.Join(root, "courier.toml")); err != nil {
				t.Fatal(err)
			}
			return root, ws
		}, "holds the settings file courier.toml"},
		{"workspace is the home folder", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "root"), mkdir(t, b, "home/me")
		}, "is your home folder, where commands could change your shell's startup files"},
		{"workspace holds the home folder", func(t *testing.T, b string) (string, string) {
			mkdir(t, b, "home/me")
			return mkdir(t, b, "root"), filepath.Join(b, "home")
		}, "holds your home folder"},
		{"workspace reached through a symlink to the home folder", func(t *testing.T, b string) (string, string) {
			link := filepath.Join(b, "ws")
			if err := os.Symlink(mkdir(t, b, "home/me"), link); err != nil {
				t.Fatal(err)
			}
			return mkdir(t, b, "root"), link
		}, "is your home folder"},
		{"project inside the home folder", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "home/me/courier"), mkdir(t, b, "home/me/project")
		}, ""},
		{"home folder not made yet, inside the workspace", func(t *testing.T, b string) (string, string) {
			return mkdir(t, b, "root"), mkdir(t, b, "home")
		}, "holds your home folder"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			root, ws := tc.setup(t, base)
			p := DefaultPaths(root)
			p.Home = filepath.Join(base, "home", "me")
			err := p.CheckLayout(ws)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckLayout = %v, want nil", err)
			case tc.want == "":
				return
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("CheckLayout = %v, want an error containing %q", err, tc.want)
			}
			var le *LayoutError
			if !errors.As(err, &le) || le.Workspace == "" {
				t.Errorf("CheckLayout = %#v, want a *LayoutError naming the workspace", err)
			}
		})
	}
}

func mkdir(t *testing.T, base, rel string) string {
	t.Helper()
	p := filepath.Join(base, rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The list of the person's roots keeps to the roots that exist, this one
// first, and hides each one's courier folders from commands.
func TestCourierPlacesListsTheRootsThatExist(t *testing.T) {
	state, other, here := t.TempDir(), t.TempDir(), t.TempDir()
	getenv := func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
	file := filepath.Join(state, "courier", "roots")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(other+"\n/gone/root\n"+other+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	places := DefaultPaths(here).CourierPlaces(getenv)
	for _, want := range []string{filepath.Join(here, "sessions"), filepath.Join(other, "sessions"), filepath.Join(other, "inbox"), filepath.Join(other, "cache"), file} {
		if !slices.Contains(places, want) {
			t.Errorf("places %q lack %s", places, want)
		}
	}
	if data, _ := os.ReadFile(file); string(data) != here+"\n"+other+"\n" {
		t.Errorf("the list is %q, want this root and the other that exists", data)
	}
	// A project's .courier is hidden whole: its settings lie in the
	// workspace the commands write.
	project := filepath.Join(t.TempDir(), ".courier")
	p := DefaultPaths(project)
	if places := p.CourierPlaces(getenv); !slices.Contains(places, project) || !slices.Contains(places, filepath.Join(here, "sessions")) {
		t.Errorf("places %q lack %s or the other roots' folders", places, project)
	}
}
