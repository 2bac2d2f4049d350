// Package frontend defines what a reply protocol gives courier's runner:
// the text of each request, and the reading of a reply into commands. The
// tag protocol (internal/protocol) is one front end; every other part of
// courier works on the command model and never names a protocol's syntax.
package frontend

import (
	"strings"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/workspace"
)

// FrontEnd is one protocol between courier and the LLM.
type FrontEnd interface {
	// Name identifies the protocol in session state ("tags", "json").
	Name() string
	// Render writes the request of turn t, and the sizes of its parts.
	Render(t Turn) (string, []Part)
	// Parse never fails: what it cannot read becomes a command.ParseError.
	Parse(text string) Parsed
	// NoCommands is told to the LLM when its reply held no command.
	NoCommands() string
	// Words names the protocol's commands in courier's advice to the LLM.
	Words() command.Words
}

// Turn is the turn a request shows: the runner reads each piece from the
// workspace or the history only when the front end asks for it.
type Turn interface {
	// Head is Request's fields but for the pieces below.
	Head() Request
	Listing() []workspace.Entry
	LastResults() []command.Result
	LastCommands() []command.Command
	// RequestedFiles are the files the LLM asked for, and a note of what
	// had no room.
	RequestedFiles() ([]FileContent, string)
	FirstPack() *Pack
}

// Request is everything one request to the LLM shows, whatever the
// protocol: a turn with every piece at hand.
type Request struct {
	Session  string
	Sequence int
	// FollowUps are the tasks added since the session was first complete.
	Task      string
	FollowUps []string
	// Prompt is what the PROMPT section asks for, if not the task.
	Prompt string
	// Reminder: a short reminder instead of the whole protocol.
	Reminder bool
	// Environment describes the machine (the first request of a chat).
	Environment string
	// Messages are the person's words to the LLM.
	Messages []string
	Files    []workspace.Entry
	// Notices come before the results: an undo, or what was wrong with
	// the reply as a whole.
	Notices []string
	// Commands and Results are the last reply's (Results nil at first).
	Commands  []command.Command
	Results   []command.Result
	Requested []FileContent
	// LeftOut says which files and lines had no room, and how to ask.
	LeftOut string
	// Pack is the first request's pack, after Requested.
	Pack *Pack
	// ReadLines and ReadBytes bound the file content results carry (the
	// read_lines setting and the room for files; 0: no bound).
	ReadLines, ReadBytes int
}

// A Request is a Turn with its pieces at hand.
func (r Request) Head() Request                           { return r }
func (r Request) Listing() []workspace.Entry              { return r.Files }
func (r Request) LastResults() []command.Result           { return r.Results }
func (r Request) LastCommands() []command.Command         { return r.Commands }
func (r Request) RequestedFiles() ([]FileContent, string) { return r.Requested, r.LeftOut }
func (r Request) FirstPack() *Pack                        { return r.Pack }

// FileContent is one requested file as a request shows it: Text numbered,
// or why it is not; First and Last the lines shown when not the whole file
// (Total its lines then, -1 when too large to count).
type FileContent struct {
	Path, Text         string
	First, Last, Total int
}

// Pack is the files the first request packs, read one at a time: Files
// calls add with each, whose Text is good only during the call.
type Pack struct {
	Files func(add func(FileContent))
}

// Part is one part of a request and its size, to show what makes a
// request large.
type Part struct {
	Name  string
	Bytes int
}

// Parsed is a reply read by a front end.
type Parsed struct {
	Session  string // the session id it echoes, lower case
	Sequence int    // the request number it echoes
	// Commands are in order, parse errors included.
	Commands []command.Command
}

// IsRequest reports whether text is one of courier's own requests, saved
// or copied by mistake where a reply belongs: its examples must never run.
// Every front end writes requests with the same four sections.
func IsRequest(text string) bool {
	text = strings.TrimPrefix(text, "\ufeff")
	return strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "=== HEADER ===") &&
		strings.Contains(text, "\n=== PROTOCOL ===\n")
}
