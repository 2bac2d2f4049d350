package prompts

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

// The protocol text documents every command with an example block, the
// path rules, and the reply header the loop relies on.
func TestProtocolDocumentsEveryCommand(t *testing.T) {
	for _, typ := range command.Types {
		if !strings.Contains(Protocol, "\n["+string(typ)) {
			t.Errorf("no example of %s at the start of a line", typ)
		}
	}
	for _, want := range []string{
		"<<<<<<< SEARCH", ">>>>>>> REPLACE", `lines="120-180"`,
		"Session: <the session id>", "Sequence: <the sequence number>",
		"REJECTED: Path", "relative to the workspace",
	} {
		if !strings.Contains(Protocol, want) {
			t.Errorf("the protocol text does not mention %q", want)
		}
	}
}
