package shell

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		session int
		state   byte
		ok      bool
	}{
		{"plain", "42 (sleep) S 1 40 41 0 -1", 41, 'S', true},
		{"name with spaces and parentheses", "42 (my (odd) name) R 1 40 41 0", 41, 'R', true},
		{"zombie", "42 (sh) Z 1 40 41 0", 41, 'Z', true},
		{"truncated", "42 (sh) S 1", 0, 0, false},
		{"garbage", "nothing here", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			session, state, ok := parseStat([]byte(tt.stat))
			if session != tt.session || state != tt.state || ok != tt.ok {
				t.Errorf("parseStat(%q) = %d, %q, %v; want %d, %q, %v", tt.stat, session, state, ok, tt.session, tt.state, tt.ok)
			}
		})
	}
}

func TestSessionMembersFindsThisProcess(t *testing.T) {
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pid := range sessionMembers(sid) {
		found = found || pid == os.Getpid()
	}
	if !found {
		t.Errorf("sessionMembers(%d) does not list the test process %d", sid, os.Getpid())
	}
}
