package machine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/machine"
	"github.com/courier-agent/courier/internal/protocol"
)

// The description speaks each protocol's words: how a command is named,
// how it asks for more time, and how its output comes back (merged in the
// tag protocol, apart in the JSON one).
func TestTextInEachProtocolsWords(t *testing.T) {
	d := machine.Description{
		OS: "linux", Shell: "/bin/sh",
		Tools:  []machine.Tool{{Name: "git", Version: "2.43.0"}},
		Absent: []string{"cargo"},
		Git:    true, Branch: "main", GitStatus: []string{" M a.go"}, MoreStatus: 1,
		Limits: machine.Limits{Timeout: 2 * time.Minute, MaxOutput: 4000, NoNetwork: true},
	}
	tags := d.Text(protocol.Tags{}.Words())
	for _, want := range []string{
		"- Operating system: linux; commands run with /bin/sh -c",
		"- Tools: git (2.43.0)",
		"- Not installed: cargo",
		"    ... and 1 more line",
		"- Each RUN_COMMAND has a time limit of 2m (more with timeout=\"...\"); its output is capped at 4,000 characters, keeping the head and the tail; stdout and stderr are merged in the order written; there is no stdin",
		"- Commands have no network",
	} {
		if !strings.Contains(tags, want) {
			t.Errorf("tag description lacks %q:\n%s", want, tags)
		}
	}
	json := d.Text(agentspaces.Chat{}.Words())
	if !strings.Contains(json, "- Each shell operation has a time limit of 2m (more with \"timeout\" in milliseconds); its output is capped at 4,000 characters, keeping the head and the tail; stdout and stderr come back apart; there is no stdin") {
		t.Errorf("JSON description:\n%s", json)
	}
	if strings.Contains(json, "RUN_COMMAND") || strings.Contains(json, "merged") {
		t.Errorf("JSON description speaks of tags or merged output:\n%s", json)
	}
}
