package prompts

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
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

// The reminder that stands for the protocol in later requests is short:
// at most 250 tokens by courier's estimate, the point of pasting the
// protocol once.
func TestRemindersAreShort(t *testing.T) {
	for name, text := range map[string]string{"reminder.txt": Reminder, "reminder_json.txt": ReminderJSON} {
		if n := human.Tokens(text); n > 250 {
			t.Errorf("%s is about %d tokens, more than 250", name, n)
		}
	}
}

// The protocol says truthfully what each message repeats, whether the
// protocol is pasted every time or once a chat: the task and the listing
// each time, the protocol or its reminder; results, files read and the
// machine's description once.
func TestProtocolSaysWhatIsRepeated(t *testing.T) {
	intro, _, _ := strings.Cut(Protocol, "HOW TO REPLY")
	intro = strings.Join(strings.Fields(intro), " ")
	for _, want := range []string{
		"either this protocol again or a short reminder",
		"the task", "workspace listing",
		"appear only once", "description of the machine only in the first message",
	} {
		if !strings.Contains(intro, want) {
			t.Errorf("the protocol's opening does not say %q:\n%s", want, intro)
		}
	}
	if strings.Contains(intro, "repeats this protocol") {
		t.Error("the protocol's opening claims every message repeats it, which protocol = \"first\" does not")
	}
}
