package agentspaces

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/prompts"
	"mvdan.cc/sh/v3/syntax"
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
	b.WriteString(fence + "json\n" + text + fence + "\n")
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
func (Chat) Parse(text string) frontend.Parsed { return ParseReply(text) }

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

// maxLineBytes cuts single lines of readFile content in a chat request, as
// the tag protocol does: one minified line must not fill it.
const maxLineBytes = 2000

// cutContent shortens a readFile event's content for a chat request as
// the tag protocol shortens READ_FILE: at most maxLines lines (0: any),
// each at most maxLineBytes, and no more once they fill room bytes (none
// when room <= 0); base64 to maxLineBytes. The "note" says what was left
// out and how to read it. It returns the bytes kept.
func cutContent(e *Event, maxLines, room int) int {
	if e.Type != EventReadFile || !e.Success {
		return 0
	}
	if room <= 0 {
		e.Content = ""
		e.Note = "Left out for room: the readFile events before this one fill what this request may show of files (the token_budget setting); readFile it again in a later reply."
		return 0
	}
	if e.Encoding == Base64 && len(e.Content) > maxLineBytes {
		keep := maxLineBytes / 4 * 4 // whole bytes
		n := keep / 4 * 3
		e.Content = e.Content[:keep]
		e.Note = fmt.Sprintf("Shortened for this request: the content shows the first %s of the file's %s bytes, as base64; read other parts with a shell operation, e.g. od -A d -t x1 -j %d -N %d %s.",
			human.Thousands(n), human.Thousands(int(e.Size)), n, n, shellQuote(e.Path))
	}
	if e.Encoding == Base64 {
		return len(e.Content)
	}
	text := e.Content
	var b strings.Builder
	lines, shown, cut := 0, 0, 0
	full := false // the room was filled
	for line := range strings.Lines(text) {
		lines++
		full = full || b.Len() >= room
		if maxLines > 0 && shown == maxLines || full {
			continue
		}
		shown++
		if body := strings.TrimSuffix(line, "\n"); len(body) > maxLineBytes {
			keep := maxLineBytes
			for keep > 0 && !utf8.RuneStart(body[keep]) {
				keep--
			}
			fmt.Fprintf(&b, "%s [... courier cut this line: %s more characters]%s", body[:keep], human.Thousands(utf8.RuneCountInString(body[keep:])), line[len(body):])
			cut++
		} else {
			b.WriteString(line)
		}
	}
	if shown == lines && cut == 0 {
		return len(text)
	}
	e.Content = b.String()
	var note []string
	if shown < lines {
		why := "the read_lines setting"
		if full {
			why = "what this request may show of files, the token_budget setting"
		}
		note = append(note, fmt.Sprintf("the content shows lines 1-%d of %s (%s); readFile has no line range, so read the rest with a shell operation, e.g. sed -n '%d,%dp' %s",
			shown, human.Thousands(lines), why, shown+1, shown+max(maxLines, shown), shellQuote(e.Path)))
	}
	if cut > 0 {
		note = append(note, fmt.Sprintf("%s longer than %s characters end in a [... courier cut this line] mark", human.Count(cut, "line", ""), human.Thousands(maxLineBytes)))
	}
	e.Note = "Shortened for this request: " + strings.Join(note, "; ") + "."
	return len(e.Content)
}

func shellQuote(p string) string {
	q, _ := syntax.Quote(p, syntax.LangPOSIX) // validation refused what it cannot quote (NUL)
	return q
}
