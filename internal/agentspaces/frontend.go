package agentspaces

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/prompts"
)

// Chat is the protocol as a front end of the copy-paste loop (`courier new
// --protocol json`): requests laid out as the tag protocol's, with the last
// reply's events message in their CONTEXT; replies read by ParseReply.
type Chat struct{}

const ChatName = "json"

// Name implements frontend.FrontEnd.
func (Chat) Name() string { return ChatName }

// Continuation is the PROMPT of every request after the first.
const Continuation = "Continue working on the task based on the events above. When the task is complete, reply with message operations only, summarising what you did."

// Render implements frontend.FrontEnd.
func (Chat) Render(t frontend.Turn) (string, []frontend.Part) {
	return protocol.RenderLayout(t, protocol.Layout{
		Protocol:     prompts.ProtocolJSON,
		Reminder:     prompts.ReminderJSON,
		Results:      writeEvents,
		ResultsTitle: "Events of your last operations",
		Continuation: Continuation,
	})
}

// writeEvents writes the CONTEXT section on the last reply: courier's
// notices, then the events message with file content shortened: events
// carry their operations, so t's commands are read.
func writeEvents(b *strings.Builder, r frontend.Request, results []command.Result, t frontend.Turn) {
	for _, n := range r.Notices {
		b.WriteString(strings.TrimRight(n, "\n"))
		b.WriteString("\n")
	}
	if len(results) == 0 && len(r.Notices) > 0 {
		return
	}
	m := Events(fmt.Sprintf("%s-%04d", r.Session, r.Sequence-1), Outcome{Commands: t.LastCommands(), Results: results}, time.Now())
	room := cmp.Or(r.ReadBytes, math.MaxInt)
	for i := range m.Events {
		room -= cutContent(&m.Events[i], r.ReadLines, room)
	}
	text, _ := FormatEvents(m)
	fence := fenceFor(text)
	b.WriteString(fence + "json\n")
	b.WriteString(text)
	b.WriteString(fence + "\n")
}

// fenceFor returns a code fence longer than any run of backticks in text.
func fenceFor(text string) string {
	longest := 2
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return r != '`' }) {
		longest = max(longest, len(run))
	}
	return strings.Repeat("`", longest+1)
}

// Parse implements frontend.FrontEnd.
func (Chat) Parse(text string) frontend.Parsed {
	r := ParseReply(text)
	return frontend.Parsed{Session: r.Session, Sequence: r.Sequence, Commands: r.Commands}
}

// NoCommands implements frontend.FrontEnd.
func (Chat) NoCommands() string {
	return `Your last reply held no operations, so nothing was done. Reply with one JSON object {"protocolVersion": "1.0", "session": ..., "sequence": ..., "operations": [...]} in a ` + "```json" + ` fence; send message operations only when the task is complete.`
}

// Words implements frontend.FrontEnd: a command is named by its operation.
func (Chat) Words() command.Words { return opWords{} }

type opWords struct{}

// Name implements command.Words: "editFile", but "a shell operation".
func (opWords) Name(t command.Type) string {
	op := opTypeOf(t)
	if op == OpShell || op == OpMessage {
		return string(op) + " operation"
	}
	return string(op)
}

// ReadLines implements command.Words: readFile has no line range.
func (opWords) ReadLines(path string, from, to int) string {
	return fmt.Sprintf("a shell operation running sed -n '%d,%dp' %s", from, to, shellQuote(path))
}

func (opWords) MoreTime() string { return `"timeout" in milliseconds` }

func (opWords) Output() string { return "stdout and stderr come back apart" }
