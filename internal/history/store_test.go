package history

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

// day is a fixed point in time, so saved and loaded times compare equal.
var day = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

func newState(id string, updated time.Duration, complete bool) *State {
	return &State{
		SessionID:      id,
		Task:           "task of " + id,
		SequenceNumber: 1,
		IsComplete:     complete,
		CreatedAt:      day,
		UpdatedAt:      day.Add(updated),
		Workspace:      "/work/" + id,
	}
}

func newStore(t *testing.T) Store {
	t.Helper()
	return Store{Dir: filepath.Join(t.TempDir(), "sessions")}
}

func TestCreateLoadSaveRoundTrip(t *testing.T) {
	s := newStore(t)
	exit := 2
	st := newState("0a1b2c3d", 0, false)
	st.SequenceNumber = 3
	st.LastResults = []command.Result{
		{Type: command.CreateFile, Path: "a.go", Status: command.OK, Summary: "created a.go", Added: 3},
		{Type: command.RunCommand, Status: command.Failed, Summary: "exit 2", Output: "boom\n", ExitCode: &exit, Command: "make"},
	}
	st.ReadFileRequests = []ReadRequest{{Path: "a.go"}, {Path: "b.go", StartLine: 3, EndLine: 9}}
	st.Notices = []string{"turn 2 was undone"}
	st.Includes = []string{"*.go"}
	st.ApprovedRules = []string{"go test"}
	st.Pending = &Pending{Sequence: 3, Index: 1, Command: "rm -rf build", Reason: "deletes files"}
	if err := create(s, st); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("0a1b2c3d")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("loaded\n%+v\nwant\n%+v", got, st)
	}
	if info, err := os.Stat(s.Folder("0a1b2c3d")); err != nil || !info.IsDir() {
		t.Errorf("session folder not made: %v", err)
	}

	st.SequenceNumber = 4
	st.Pending = nil
	if err := s.Save(st); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load("0a1b2c3d"); got.SequenceNumber != 4 || got.Pending != nil {
		t.Errorf("after save: %+v", got)
	}
	if left := tempNames(t, s.Dir); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

func TestCreateRefusesExisting(t *testing.T) {
	s := newStore(t)
	if err := create(s, newState("0000000a", 0, false)); err != nil {
		t.Fatal(err)
	}
	before := readBytes(t, s.Path("0000000a"))
	other := newState("0000000a", time.Hour, true)
	other.Task = "another task"
	if err := create(s, other); err == nil {
		t.Fatal("second create succeeded")
	}
	if after := readBytes(t, s.Path("0000000a")); string(after) != string(before) {
		t.Errorf("file changed by the refused create")
	}
}

func TestLoadBadIDs(t *testing.T) {
	s := newStore(t)
	if err := create(s, newState("0000000a", 0, false)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "abc", "ABCDEF12", "0000000g", "000000001", "../../../etc/passwd", "0000000a/..", "0000000a.json"} {
		_, err := s.Load(id)
		if err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Load(%q) = %v, want a bad id error", id, err)
			continue
		}
		var bad *InvalidIDError
		if !errors.As(err, &bad) || bad.ID != id || !strings.Contains(err.Error(), "not a session id") {
			t.Errorf("Load(%q) = %v, want an *InvalidIDError", id, err)
		}
	}
	_, err := s.Load("0000000b")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), s.Path("0000000b")) {
		t.Errorf("Load of a missing session = %v, want ErrNotFound naming the file", err)
	}
}

func TestCorruptSessionFiles(t *testing.T) {
	tests := []struct {
		name    string
		content string
	}{
		{name: "truncated", content: `{"sessionId": "0000000a", "task": "fix the bu`},
		{name: "not json", content: "this is not json\n"},
		{name: "empty", content: ""},
		{name: "binary", content: "\x00\x01\x02\xff"},
		{name: "wrong id", content: `{"sessionId": "0000000b", "sequenceNumber": 1}`},
		{name: "no sequence", content: `{"sessionId": "0000000a", "sequenceNumber": 0}`},
		{name: "wrong type", content: `{"sessionId": "0000000a", "sequenceNumber": "one"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if err := create(s, newState("0000000c", 0, false)); err != nil {
				t.Fatal(err)
			}
			p := s.Path("0000000a")
			if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := s.Load("0000000a")
			checkCorrupt(t, err, p)

			all, errs := s.List()
			if len(all) != 1 || all[0].SessionID != "0000000c" || len(errs) != 1 {
				t.Errorf("List = %d sessions, errors %v", len(all), errs)
			} else {
				checkCorrupt(t, errs[0], p)
			}
			if _, err := s.Load("0000000a"); err == nil {
				t.Error("Load of a corrupt session succeeded")
			}
			if err := s.Save(newState("0000000c", time.Hour, false)); err != nil {
				t.Fatal(err)
			}
			if got := readBytes(t, p); string(got) != tc.content {
				t.Errorf("corrupt file changed to %q", got)
			}
			info, _ := os.Stat(p)
			if info.Mode().Perm() != 0o600 {
				t.Errorf("corrupt file mode changed to %v", info.Mode().Perm())
			}
		})
	}
}

func checkCorrupt(t *testing.T, err error, path string) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *CorruptError", err)
	}
	if ce.Path != path || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want it to name %s", err, path)
	}
}

func TestList(t *testing.T) {
	s := newStore(t)
	for _, st := range []*State{
		newState("0000000a", 1*time.Hour, false),
		newState("0000000b", 3*time.Hour, false),
		newState("0000000c", 5*time.Hour, true),
		newState("0000000d", 2*time.Hour, false),
	} {
		if err := create(s, st); err != nil {
			t.Fatal(err)
		}
	}
	// Files and folders that are not sessions are passed over.
	for _, name := range []string{"notes.txt", "0000000a.lock", "ABCDEF12.json", "0000000z.json"} {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(s.Dir, "0000000e.json"), 0o755); err != nil {
		t.Fatal(err)
	}

	all, errs := s.List()
	if len(errs) > 0 {
		t.Fatalf("List errors: %v", errs)
	}
	var ids []string
	for _, st := range all {
		ids = append(ids, st.SessionID)
	}
	if want := []string{"0000000c", "0000000b", "0000000d", "0000000a"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("List order %q, want %q", ids, want)
	}
	// An update moves a session to the front.
	a, _ := s.Load("0000000a")
	a.UpdatedAt = day.Add(6 * time.Hour)
	if err := s.Save(a); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.List(); all[0].SessionID != "0000000a" {
		t.Errorf("after update the first is %s, want 0000000a", all[0].SessionID)
	}
}

func TestListMissingFolder(t *testing.T) {
	if _, errs := (Store{Dir: filepath.Join(t.TempDir(), "missing")}).List(); len(errs) != 1 {
		t.Errorf("List of a missing folder: errors %v", errs)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{"0a1b2c3d": true, "ffffffff": true, "0A1B2C3D": false, "0a1b2c3": false, "0a1b2c3d4": false, "": false, "0a1b2c3z": false} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v", id, got)
		}
	}
}

func readBytes(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func tempNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".courier-tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// create saves a new session as 'courier ops' does.
func create(s Store, st *State) error {
	f, err := s.StageNew(st)
	if err == nil {
		err = f.Commit()
	}
	return err
}
